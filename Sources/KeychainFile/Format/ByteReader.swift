/// Reads big-endian integers and byte runs from untrusted bytes, checking every length first.
///
/// Verbs as in swift-nio's ByteBuffer: `read…` consumes and advances; a read past the end throws a
/// `ByteReader.Underflow` naming the field, never traps. Offsets are relative to the start of the bytes
/// given; the caller adds the position of those bytes in the file for error messages.
struct ByteReader {
    /// Thrown when a field does not fit in the remaining bytes.
    struct Underflow: Error, Equatable {
        let offset: Int
        let field: String
    }

    private let bytes: [UInt8]
    private(set) var offset: Int
    private let end: Int

    /// Reads `bytes[range]`.
    init(_ bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        let range = range ?? 0..<bytes.count
        offset = range.lowerBound
        end = range.upperBound
    }

    /// Bytes not read yet.
    var remaining: Int { end - offset }
    var isAtEnd: Bool { offset == end }

    mutating func readUInt8(_ field: String) throws(Underflow) -> UInt8 {
        guard remaining >= 1 else { throw Underflow(offset: offset, field: field) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt16(_ field: String) throws(Underflow) -> UInt16 {
        guard remaining >= 2 else { throw Underflow(offset: offset, field: field) }
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    mutating func readUInt32(_ field: String) throws(Underflow) -> UInt32 {
        guard remaining >= 4 else { throw Underflow(offset: offset, field: field) }
        var value: UInt32 = 0
        for index in 0..<4 { value = value << 8 | UInt32(bytes[offset + index]) }
        offset += 4
        return value
    }

    mutating func readUInt64(_ field: String) throws(Underflow) -> UInt64 {
        guard remaining >= 8 else { throw Underflow(offset: offset, field: field) }
        var value: UInt64 = 0
        for index in 0..<8 { value = value << 8 | UInt64(bytes[offset + index]) }
        offset += 8
        return value
    }

    /// Reads `count` bytes as an array.
    mutating func readBytes(_ count: Int, _ field: String) throws(Underflow) -> [UInt8] {
        let range = try readRange(count, field)
        return Array(bytes[range])
    }

    /// Skips `count` bytes and returns their range in the underlying array, for zero-copy access.
    mutating func readRange(_ count: Int, _ field: String) throws(Underflow) -> Range<Int> {
        guard count >= 0, remaining >= count else { throw Underflow(offset: offset, field: field) }
        defer { offset += count }
        return offset..<(offset + count)
    }
}
