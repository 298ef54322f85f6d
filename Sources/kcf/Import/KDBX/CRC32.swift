/// The CRC-32 of gzip and zlib (ISO 3309, reflected polynomial 0xEDB88320): a checksum that catches damage,
/// not tampering.
struct CRC32 {
    /// The checksum of the bytes added so far.
    private(set) var value: UInt32 = 0

    /// Adds `bytes` to the checksum.
    mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        var crc = ~value
        for byte in bytes {
            crc = Self.table[Int((crc ^ UInt32(byte)) & 0xff)] ^ (crc >> 8)
        }
        value = ~crc
    }

    /// The checksum of `bytes`.
    static func checksum<Bytes: Sequence>(_ bytes: Bytes) -> UInt32 where Bytes.Element == UInt8 {
        var crc = CRC32()
        crc.update(bytes)
        return crc.value
    }

    private static let table: [UInt32] = (0..<256).map { (index: Int) -> UInt32 in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }
}
