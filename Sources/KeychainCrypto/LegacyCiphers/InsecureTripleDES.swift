extension Insecure {
    /// Triple-DES (TDEA, NIST SP 800-67) in CBC mode, **decryption only, to read old PKCS #12 files**.
    ///
    /// DES has a 56-bit key and a 64-bit block; TDEA applies it three times (decrypt with K3, encrypt with K2,
    /// decrypt with K1). NIST disallowed it for encryption after 2023 and its 64-bit block leaks after a few
    /// gigabytes (Sweet32). KeychainFile never encrypts with it: it is here so that files written by macOS
    /// Keychain Access, Windows and OpenSSL 1.x (`pbeWithSHAAnd3-KeyTripleDES-CBC`) can be imported.
    ///
    /// For example:
    /// ```swift
    /// let key = SymmetricKey(data: keyBytes)  // 24 bytes (K1 ‖ K2 ‖ K3) or 16 (K1 ‖ K2, K3 = K1)
    /// let plaintext = try Insecure.TripleDES.CBC.decrypt(ciphertext, using: key, iv: iv)  // iv: 8 bytes
    /// ```
    public enum TripleDES: Sendable {
        /// TDEA's block size: 8 bytes.
        public static let blockByteCount = 8

        /// Triple-DES in cipher block chaining mode (NIST SP 800-38A §6.2), decryption only.
        public enum CBC: Sendable {
            /// Decrypts `ciphertext` and, unless `pkcs7Padding` is false, checks and removes its PKCS #7 padding
            /// (1 to 8 bytes).
            ///
            /// The parity bits of the key (the low bit of each byte) are ignored, as DES ignores them.
            ///
            /// - Parameters:
            ///   - ciphertext: A whole number of 8-byte blocks (at least one with padding).
            ///   - key: 24 bytes (three keys) or 16 bytes (two keys: the third is the first).
            ///   - iv: The 8-byte initialization vector.
            ///   - pkcs7Padding: Whether to check and remove PKCS #7 padding; `false` for known-answer tests.
            /// - Returns: The plaintext.
            /// - Throws: ``CryptoKitError/incorrectKeySize`` for another key size;
            ///   ``CryptoKitError/incorrectParameterSize`` if `iv` is not 8 bytes or `ciphertext` not whole blocks
            ///   (or empty, with padding); ``CryptoKitError/authenticationFailure`` when the padding does not check
            ///   (a wrong key or altered ciphertext): no plaintext is returned then.
            public static func decrypt<Ciphertext: Sequence, IV: Sequence>(
                _ ciphertext: Ciphertext, using key: SymmetricKey, iv: IV, pkcs7Padding: Bool = true
            ) throws(CryptoKitError) -> [UInt8] where Ciphertext.Element == UInt8, IV.Element == UInt8 {
                let keyBytes = key.withUnsafeBytes { Array($0) }
                guard keyBytes.count == 24 || keyBytes.count == 16 else { throw .incorrectKeySize }
                let first = DESKeySchedule(key: Array(keyBytes[0..<8]))
                let second = DESKeySchedule(key: Array(keyBytes[8..<16]))
                let third = keyBytes.count == 24 ? DESKeySchedule(key: Array(keyBytes[16..<24])) : first
                return try LegacyCBCDecryption.decrypt(Array(ciphertext), iv: Array(iv), pkcs7Padding: pkcs7Padding) { block in
                    first.decrypt(second.encrypt(third.decrypt(block)))
                }
            }
        }
    }
}
