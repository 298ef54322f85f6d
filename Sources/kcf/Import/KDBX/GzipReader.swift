/// Reads a gzip file (RFC 1952) of one member, as KDBX 4 compresses its payload: the header (with its optional
/// extra field, name, comment and header CRC), the DEFLATE data, then CRC-32 and ISIZE, both checked. Bytes
/// after the member are refused.
enum GzipReader {
    /// The data of the gzip stream `bytes`.
    ///
    /// - Parameters:
    ///   - bytes: A whole gzip stream.
    ///   - maximumOutput: The most bytes inflated before it is refused.
    /// - Throws: ``DeflateError`` naming what is wrong.
    static func decompress(_ bytes: [UInt8], maximumOutput: Int) throws(DeflateError) -> [UInt8] {
        guard bytes.count >= 18 else { throw DeflateError("the gzip data is \(bytes.count) bytes, shorter than any gzip stream") }
        guard bytes[0] == 0x1f, bytes[1] == 0x8b else { throw DeflateError("the data is not gzip (it does not start with 1F 8B)") }
        guard bytes[2] == 8 else { throw DeflateError("the gzip data uses compression method \(bytes[2]), not DEFLATE (8)") }
        let flags = bytes[3]
        guard flags & 0xe0 == 0 else { throw DeflateError("the gzip header sets reserved flags") }
        var offset = 10
        func need(_ count: Int) throws(DeflateError) {
            guard count <= bytes.count - offset else { throw DeflateError("the gzip header is cut short") }
        }
        if flags & 0x04 != 0 {
            try need(2)
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
            offset += 2
            try need(length)
            offset += length
        }
        for flag: UInt8 in [0x08, 0x10] where flags & flag != 0 {
            while true {
                try need(1)
                offset += 1
                if bytes[offset - 1] == 0 { break }
            }
        }
        if flags & 0x02 != 0 {
            try need(2)
            let stored = UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8
            guard stored == CRC32.checksum(bytes[0..<offset]) & 0xffff else { throw DeflateError("the gzip header's CRC does not match") }
            offset += 2
        }
        let (output, end) = try Inflater.inflate(bytes, from: offset, maximumOutput: maximumOutput)
        guard bytes.count - end >= 8 else { throw DeflateError("the gzip data ends before its CRC-32 and length") }
        let crc = littleEndian(bytes, at: end)
        let size = littleEndian(bytes, at: end + 4)
        guard crc == CRC32.checksum(output) else { throw DeflateError("the gzip data's CRC-32 does not match: the data is damaged") }
        guard size == UInt32(truncatingIfNeeded: output.count) else { throw DeflateError("the gzip data's length (ISIZE) does not match") }
        guard end + 8 == bytes.count else { throw DeflateError("\(bytes.count - end - 8) bytes follow the gzip data") }
        return output
    }

    private static func littleEndian(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }
}
