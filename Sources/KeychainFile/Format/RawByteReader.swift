/// ``ByteReader`` over bytes in memory the caller holds (a page decrypted into an arena): big-endian integers
/// and ranges read from untrusted bytes, every length checked first; a read past the end throws a
/// ``ByteReader/Underflow`` naming the field, never traps. Offsets are relative to the start of the bytes.
///
/// The caller keeps the bytes alive and unchanged while the reader is used.
struct RawByteReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset == bytes.count }

    mutating func readUInt8(_ field: String) throws(ByteReader.Underflow) -> UInt8 {
        UInt8(try readInteger(1, field))
    }

    mutating func readUInt16(_ field: String) throws(ByteReader.Underflow) -> UInt16 {
        UInt16(try readInteger(2, field))
    }

    mutating func readUInt32(_ field: String) throws(ByteReader.Underflow) -> UInt32 {
        UInt32(try readInteger(4, field))
    }

    mutating func readUInt64(_ field: String) throws(ByteReader.Underflow) -> UInt64 {
        try readInteger(8, field)
    }

    /// Skips `count` bytes and returns their range.
    mutating func readRange(_ count: Int, _ field: String) throws(ByteReader.Underflow) -> Range<Int> {
        guard count >= 0, remaining >= count else { throw ByteReader.Underflow(offset: offset, field: field) }
        defer { offset += count }
        return offset..<(offset + count)
    }

    private mutating func readInteger(_ size: Int, _ field: String) throws(ByteReader.Underflow) -> UInt64 {
        let range = try readRange(size, field)
        var value: UInt64 = 0
        for index in range { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
