/// A cursor over the fuzzer's bytes. Reading past the end gives zeros and empty arrays, so every input
/// decodes to something: the fuzzer never wastes an execution on a format error of the harness.
struct FuzzInput {
    private let bytes: [UInt8]
    private(set) var position: Int

    init(_ bytes: [UInt8], from position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    var isAtEnd: Bool { position >= bytes.count }

    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// Big-endian, as the file format.
    mutating func uint16() -> UInt16 {
        UInt16(byte()) << 8 | UInt16(byte())
    }

    mutating func uint24() -> Int {
        Int(byte()) << 16 | Int(uint16())
    }

    mutating func uint64() -> UInt64 {
        (0..<8).reduce(UInt64(0)) { value, _ in value << 8 | UInt64(byte()) }
    }

    /// Up to `count` bytes: fewer if the input ends first.
    mutating func bytes(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, position + count)
        guard position < end else { return [] }
        defer { position = end }
        return Array(bytes[position..<end])
    }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] { bytes(bytes.count - position) }
}
