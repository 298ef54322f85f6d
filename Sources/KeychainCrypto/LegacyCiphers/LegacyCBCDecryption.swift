/// CBC decryption and PKCS #7 padding removal for the 64-bit block ciphers of legacy files (TDEA, RC2).
enum LegacyCBCDecryption {
    /// Decrypts `ciphertext` block by block with `decryptBlock` (a big-endian 64-bit block in, one out),
    /// chaining with `iv`, and checks and removes the padding unless `pkcs7Padding` is false.
    ///
    /// - Throws: ``CryptoKitError/incorrectParameterSize`` for an IV that is not 8 bytes or a ciphertext that
    ///   is not whole blocks (or empty, with padding); ``CryptoKitError/authenticationFailure`` when the padding
    ///   does not check.
    static func decrypt(_ ciphertext: [UInt8], iv: [UInt8], pkcs7Padding: Bool,
                        decryptBlock: (UInt64) -> UInt64) throws(CryptoKitError) -> [UInt8] {
        guard iv.count == 8 else { throw .incorrectParameterSize }
        guard ciphertext.count % 8 == 0, !(pkcs7Padding && ciphertext.isEmpty) else { throw .incorrectParameterSize }
        var previous = Self.word(iv, at: 0)
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        for offset in stride(from: 0, to: ciphertext.count, by: 8) {
            let block = Self.word(ciphertext, at: offset)
            let decrypted = decryptBlock(block) ^ previous
            for index in 0..<8 { plaintext[offset + index] = UInt8(truncatingIfNeeded: decrypted >> UInt64(56 - 8 * index)) }
            previous = block
        }
        guard pkcs7Padding else { return plaintext }
        let pad = paddingLength(plaintext)
        guard pad > 0 else {
            plaintext.withUnsafeMutableBytes { secureZero($0.baseAddress!, count: $0.count) }
            throw .authenticationFailure
        }
        let result = Array(plaintext[0..<(plaintext.count - pad)])
        plaintext.withUnsafeMutableBytes { secureZero($0.baseAddress!, count: $0.count) }
        return result
    }

    /// The PKCS #7 padding length of the last 8-byte block, or 0 when the padding is not valid, computed
    /// without a branch on the plaintext bytes.
    static func paddingLength(_ data: [UInt8]) -> Int {
        let value = UInt32(data[data.count - 1])
        var valid = ((value &- 1) >> 31) ^ 1                 // 0 when the last byte is 0
        valid &= ((8 &- value) >> 31) ^ 1                    // 0 when it is above 8
        for distance in 1...8 {
            let byte = UInt32(data[data.count - distance])
            let inside = ((value &- UInt32(distance)) >> 31) ^ 1
            let differs = (0 &- (byte ^ value)) >> 31
            valid &= ~(inside & differs) & 1
        }
        return Int(value & (0 &- valid))
    }

    private static func word(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + 8) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
