/// PKCS #7 padding removal for CBC decryption (AES's 16-byte blocks, the legacy ciphers' 8), checked without a
/// branch on the plaintext's bytes, so that how long it takes says nothing of where the padding failed.
///
/// For example:
/// ```swift
/// let plaintext = try PKCS7Padding.removed(from: &decrypted, blockSize: 16)   // `decrypted` is zeroed
/// ```
enum PKCS7Padding {
    /// The plaintext without its padding; `data` (the decrypted blocks) is zeroed either way.
    ///
    /// - Throws: ``CryptoKitError/authenticationFailure`` when the padding does not check.
    static func removed(from data: inout [UInt8], blockSize: Int) throws(CryptoKitError) -> [UInt8] {
        defer { data.withUnsafeMutableBytes { secureZero($0.baseAddress!, count: $0.count) } }
        let pad = length(of: data, blockSize: blockSize)
        guard pad > 0 else { throw .authenticationFailure }
        return Array(data[0..<(data.count - pad)])
    }

    /// The padding length of `data`'s last block, or 0 when the padding is not valid.
    ///
    /// - Precondition: `data` is at least one block.
    static func length(of data: [UInt8], blockSize: Int) -> Int {
        let value = UInt32(data[data.count - 1])
        var valid = ((value &- 1) >> 31) ^ 1                        // 0 when the last byte is 0
        valid &= ((UInt32(blockSize) &- value) >> 31) ^ 1           // 0 when it is above the block size
        for distance in 1...blockSize {
            let byte = UInt32(data[data.count - distance])
            // Inside the padding when distance ≤ value; each such byte must equal value.
            let inside = ((value &- UInt32(distance)) >> 31) ^ 1
            let differs = (0 &- (byte ^ value)) >> 31                // 1 when byte != value
            valid &= ~(inside & differs) & 1
        }
        return Int(value & (0 &- valid))
    }
}
