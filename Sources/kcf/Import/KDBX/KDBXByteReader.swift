/// Reads little-endian fields of a KDBX file from a byte array; reading past the end is a ``KDBXError``
/// naming what was being read, never a crash.
struct KDBXByteReader {
    let bytes: [UInt8]
    /// The offset of the next byte.
    private(set) var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    /// Whether every byte was read.
    var isAtEnd: Bool { offset == bytes.count }

    /// How many bytes are left.
    var remaining: Int { bytes.count - offset }

    /// The next `count` bytes.
    mutating func take(_ count: Int, _ what: String) throws(KDBXError) -> [UInt8] {
        guard count >= 0, count <= remaining else {
            throw .damaged("the file ends inside \(what) (at byte \(offset), \(count) bytes wanted, \(remaining) left)")
        }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func uint8(_ what: String) throws(KDBXError) -> UInt8 {
        try take(1, what)[0]
    }

    mutating func uint16(_ what: String) throws(KDBXError) -> UInt16 {
        UInt16(truncatingIfNeeded: Self.littleEndian(try take(2, what)))
    }

    mutating func uint32(_ what: String) throws(KDBXError) -> UInt32 {
        UInt32(truncatingIfNeeded: Self.littleEndian(try take(4, what)))
    }

    mutating func uint64(_ what: String) throws(KDBXError) -> UInt64 {
        Self.littleEndian(try take(8, what))
    }

    /// The unsigned little-endian number of up to 8 bytes.
    static func littleEndian(_ bytes: [UInt8]) -> UInt64 {
        bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// `value`'s 8 bytes, little-endian.
    static func bytes(of value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}
