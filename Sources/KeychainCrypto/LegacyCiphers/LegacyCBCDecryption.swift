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
        return try PKCS7Padding.removed(from: &plaintext, blockSize: 8)
    }

    private static func word(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + 8) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
