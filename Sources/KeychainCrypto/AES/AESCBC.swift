extension AES {
    /// AES in cipher block chaining mode (NIST SP 800-38A §6.2), with PKCS #7 padding (RFC 5652 §6.3) by
    /// default: the cipher of PKCS #5 PBES2 and of PKCS #12 files.
    ///
    /// CBC is not authenticated: a wrong key or altered ciphertext decrypts to other bytes, and usually (not
    /// always) to a padding that does not check. Use it to read and write formats that need it, behind a MAC
    /// checked first; for new data use ``AES/GCM``. The padding is checked in constant time, so the time taken
    /// does not tell which padding byte was wrong.
    ///
    /// For example:
    /// ```swift
    /// let key = SymmetricKey(size: .bits256)
    /// let iv: [UInt8] = Array(repeating: 0, count: 16)  // use 16 random bytes
    /// let sealed = try AES.CBC.encrypt(Array("attack at dawn".utf8), using: key, iv: iv)
    /// let opened = try AES.CBC.decrypt(sealed, using: key, iv: iv)  // "attack at dawn"
    /// ```
    public enum CBC: Sendable {
        /// Encrypts `plaintext`, padded to a whole number of blocks unless `pkcs7Padding` is false.
        ///
        /// - Parameters:
        ///   - plaintext: The bytes to encrypt; without padding, a multiple of 16 bytes.
        ///   - key: A 128-, 192- or 256-bit key.
        ///   - iv: The 16-byte initialization vector, unpredictable and never reused with `key`.
        ///   - pkcs7Padding: Whether to add PKCS #7 padding (1 to 16 bytes); `false` for known-answer tests.
        /// - Returns: The ciphertext, as long as the padded plaintext.
        /// - Throws: ``CryptoKitError/incorrectKeySize`` for other key sizes; ``CryptoKitError/incorrectParameterSize``
        ///   if `iv` is not 16 bytes or, without padding, `plaintext` is not a whole number of blocks.
        public static func encrypt<Plaintext: Sequence, IV: Sequence>(
            _ plaintext: Plaintext, using key: SymmetricKey, iv: IV, pkcs7Padding: Bool = true
        ) throws(CryptoKitError) -> [UInt8] where Plaintext.Element == UInt8, IV.Element == UInt8 {
            let chain = Array(iv)
            guard chain.count == blockByteCount else { throw .incorrectParameterSize }
            var data = Array(plaintext)
            if pkcs7Padding {
                let pad = blockByteCount - data.count % blockByteCount
                data.append(contentsOf: repeatElement(UInt8(pad), count: pad))
            } else if data.count % blockByteCount != 0 {
                throw .incorrectParameterSize
            }
            let keys = try roundKeys(key, .encryption)
            data.withUnsafeMutableBytes { buffer in
                guard let base = buffer.baseAddress else { return }
                var previous = chain
                for offset in stride(from: 0, to: buffer.count, by: blockByteCount) {
                    for index in 0..<blockByteCount { buffer[offset + index] ^= previous[index] }
                    transformBlocks(base + offset, count: 1, keys: keys, direction: .encryption)
                    for index in 0..<blockByteCount { previous[index] = buffer[offset + index] }
                }
            }
            return data
        }

        /// Decrypts `ciphertext` and, unless `pkcs7Padding` is false, checks and removes its padding.
        ///
        /// - Parameters:
        ///   - ciphertext: A whole number of 16-byte blocks (at least one with padding).
        ///   - key: A 128-, 192- or 256-bit key.
        ///   - iv: The 16-byte initialization vector it was encrypted with.
        ///   - pkcs7Padding: Whether to check and remove PKCS #7 padding.
        /// - Returns: The plaintext.
        /// - Throws: ``CryptoKitError/incorrectKeySize`` for other key sizes; ``CryptoKitError/incorrectParameterSize``
        ///   if `iv` is not 16 bytes or `ciphertext` is not a whole number of blocks (or empty, with padding);
        ///   ``CryptoKitError/authenticationFailure`` if the padding does not check — a wrong key or IV, or
        ///   altered ciphertext. No plaintext is returned then.
        public static func decrypt<Ciphertext: Sequence, IV: Sequence>(
            _ ciphertext: Ciphertext, using key: SymmetricKey, iv: IV, pkcs7Padding: Bool = true
        ) throws(CryptoKitError) -> [UInt8] where Ciphertext.Element == UInt8, IV.Element == UInt8 {
            let chain = Array(iv)
            guard chain.count == blockByteCount else { throw .incorrectParameterSize }
            var data = Array(ciphertext)
            guard data.count % blockByteCount == 0, !(pkcs7Padding && data.isEmpty) else { throw .incorrectParameterSize }
            let keys = try roundKeys(key, .decryption)
            let source = data
            data.withUnsafeMutableBytes { buffer in
                guard let base = buffer.baseAddress else { return }
                // Every block is decrypted independently, so eight go through the cipher at once.
                let blockCount = buffer.count / blockByteCount
                var first = 0
                while first < blockCount {
                    let count = min(8, blockCount - first)
                    transformBlocks(base + first * blockByteCount, count: count, keys: keys, direction: .decryption)
                    first += count
                }
                for offset in 0..<buffer.count {
                    buffer[offset] ^= offset < blockByteCount ? chain[offset] : source[offset - blockByteCount]
                }
            }
            guard pkcs7Padding else { return data }
            return try PKCS7Padding.removed(from: &data, blockSize: blockByteCount)
        }

        private static func roundKeys(_ key: SymmetricKey, _ direction: AESRoundKeys.Direction) throws(CryptoKitError) -> AESRoundKeys {
            try key.withUnsafeBytes { (bytes) throws(CryptoKitError) in try AESRoundKeys(key: bytes, direction: direction) }
        }
    }
}
