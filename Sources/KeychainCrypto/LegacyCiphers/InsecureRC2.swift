extension Insecure {
    /// RC2 (RFC 2268) in CBC mode, **decryption only, to read old PKCS #12 files**.
    ///
    /// RC2 is a 64-bit block cipher from 1987 whose key is cut to an "effective key length" — 40 bits in the
    /// `pbewithSHAAnd40BitRC2-CBC` certificates that OpenSSL 1.x, macOS and Windows still write, a key anyone
    /// can search in hours. KeychainFile never encrypts with it: it is here so that such files can be
    /// imported.
    ///
    /// For example:
    /// ```swift
    /// let key = SymmetricKey(data: keyBytes)  // 5 bytes for RC2-40
    /// let plaintext = try Insecure.RC2.CBC.decrypt(ciphertext, using: key, effectiveKeyBits: 40, iv: iv)
    /// ```
    public enum RC2: Sendable {
        /// RC2's block size: 8 bytes.
        public static let blockByteCount = 8

        /// RC2 in cipher block chaining mode (NIST SP 800-38A §6.2), decryption only.
        public enum CBC: Sendable {
            /// Decrypts `ciphertext` and, unless `pkcs7Padding` is false, checks and removes its PKCS #7 padding
            /// (1 to 8 bytes).
            ///
            /// - Parameters:
            ///   - ciphertext: A whole number of 8-byte blocks (at least one with padding).
            ///   - key: 1 to 128 bytes.
            ///   - effectiveKeyBits: RFC 2268's T1, 1 to 1024: 40 for RC2-40, 128 for RC2-128.
            ///   - iv: The 8-byte initialization vector.
            ///   - pkcs7Padding: Whether to check and remove PKCS #7 padding; `false` for known-answer tests.
            /// - Returns: The plaintext.
            /// - Throws: ``CryptoKitError/incorrectKeySize`` for an empty key or one above 128 bytes;
            ///   ``CryptoKitError/incorrectParameterSize`` for `effectiveKeyBits` out of range, an `iv` that is not
            ///   8 bytes or a `ciphertext` that is not whole blocks (or empty, with padding);
            ///   ``CryptoKitError/authenticationFailure`` when the padding does not check: no plaintext is
            ///   returned then.
            public static func decrypt<Ciphertext: Sequence, IV: Sequence>(
                _ ciphertext: Ciphertext, using key: SymmetricKey, effectiveKeyBits: Int, iv: IV, pkcs7Padding: Bool = true
            ) throws(CryptoKitError) -> [UInt8] where Ciphertext.Element == UInt8, IV.Element == UInt8 {
                let keyBytes = key.withUnsafeBytes { Array($0) }
                guard (1...128).contains(keyBytes.count) else { throw .incorrectKeySize }
                guard (1...1024).contains(effectiveKeyBits) else { throw .incorrectParameterSize }
                let words = RC2.expandKey(keyBytes, effectiveKeyBits: effectiveKeyBits)
                return try LegacyCBCDecryption.decrypt(Array(ciphertext), iv: Array(iv), pkcs7Padding: pkcs7Padding) { block in
                    RC2.decryptBlock(block, words: words)
                }
            }
        }

        /// The 64 key words K[0…63] of RFC 2268 §2.
        static func expandKey(_ key: [UInt8], effectiveKeyBits: Int) -> [UInt16] {
            var expanded = [UInt8](repeating: 0, count: 128)
            let length = key.count
            for index in 0..<length { expanded[index] = key[index] }
            for index in length..<128 {
                expanded[index] = piTable[Int(expanded[index - 1] &+ expanded[index - length])]
            }
            let effectiveBytes = (effectiveKeyBits + 7) / 8
            let mask = UInt8(truncatingIfNeeded: 0xff >> (8 * effectiveBytes - effectiveKeyBits))
            expanded[128 - effectiveBytes] = piTable[Int(expanded[128 - effectiveBytes] & mask)]
            for index in stride(from: 127 - effectiveBytes, through: 0, by: -1) {
                expanded[index] = piTable[Int(expanded[index + 1] ^ expanded[index + effectiveBytes])]
            }
            let words = (0..<64).map { UInt16(expanded[2 * $0]) | UInt16(expanded[2 * $0 + 1]) << 8 }
            for index in expanded.indices { expanded[index] = 0 }
            return words
        }

        /// Decrypts one block (RFC 2268 §4.5), given as the bytes in big-endian order.
        static func decryptBlock(_ block: UInt64, words key: [UInt16]) -> UInt64 {
            // The cipher's words are little-endian 16-bit halves of the bytes.
            let littleEndian = block.byteSwapped
            var r = (0..<4).map { UInt16(truncatingIfNeeded: littleEndian >> UInt64(16 * $0)) }
            var j = 63
            func mixingRound() {
                for (i, rotation) in zip([3, 2, 1, 0], [5, 3, 2, 1]) {
                    r[i] = r[i] >> rotation | r[i] << (16 - rotation)
                    r[i] = r[i] &- key[j] &- (r[(i + 3) % 4] & r[(i + 2) % 4]) &- (~r[(i + 3) % 4] & r[(i + 1) % 4])
                    j -= 1
                }
            }
            func mashingRound() {
                for i in [3, 2, 1, 0] { r[i] = r[i] &- key[Int(r[(i + 3) % 4] & 63)] }
            }
            for _ in 0..<5 { mixingRound() }
            mashingRound()
            for _ in 0..<6 { mixingRound() }
            mashingRound()
            for _ in 0..<5 { mixingRound() }
            var output: UInt64 = 0
            for index in 0..<4 { output |= UInt64(r[index]) << UInt64(16 * index) }
            return output.byteSwapped
        }

        /// PITABLE of RFC 2268 §2: a permutation of 0…255 from the digits of π.
        static let piTable: [UInt8] = [
            0xd9, 0x78, 0xf9, 0xc4, 0x19, 0xdd, 0xb5, 0xed, 0x28, 0xe9, 0xfd, 0x79, 0x4a, 0xa0, 0xd8, 0x9d,
            0xc6, 0x7e, 0x37, 0x83, 0x2b, 0x76, 0x53, 0x8e, 0x62, 0x4c, 0x64, 0x88, 0x44, 0x8b, 0xfb, 0xa2,
            0x17, 0x9a, 0x59, 0xf5, 0x87, 0xb3, 0x4f, 0x13, 0x61, 0x45, 0x6d, 0x8d, 0x09, 0x81, 0x7d, 0x32,
            0xbd, 0x8f, 0x40, 0xeb, 0x86, 0xb7, 0x7b, 0x0b, 0xf0, 0x95, 0x21, 0x22, 0x5c, 0x6b, 0x4e, 0x82,
            0x54, 0xd6, 0x65, 0x93, 0xce, 0x60, 0xb2, 0x1c, 0x73, 0x56, 0xc0, 0x14, 0xa7, 0x8c, 0xf1, 0xdc,
            0x12, 0x75, 0xca, 0x1f, 0x3b, 0xbe, 0xe4, 0xd1, 0x42, 0x3d, 0xd4, 0x30, 0xa3, 0x3c, 0xb6, 0x26,
            0x6f, 0xbf, 0x0e, 0xda, 0x46, 0x69, 0x07, 0x57, 0x27, 0xf2, 0x1d, 0x9b, 0xbc, 0x94, 0x43, 0x03,
            0xf8, 0x11, 0xc7, 0xf6, 0x90, 0xef, 0x3e, 0xe7, 0x06, 0xc3, 0xd5, 0x2f, 0xc8, 0x66, 0x1e, 0xd7,
            0x08, 0xe8, 0xea, 0xde, 0x80, 0x52, 0xee, 0xf7, 0x84, 0xaa, 0x72, 0xac, 0x35, 0x4d, 0x6a, 0x2a,
            0x96, 0x1a, 0xd2, 0x71, 0x5a, 0x15, 0x49, 0x74, 0x4b, 0x9f, 0xd0, 0x5e, 0x04, 0x18, 0xa4, 0xec,
            0xc2, 0xe0, 0x41, 0x6e, 0x0f, 0x51, 0xcb, 0xcc, 0x24, 0x91, 0xaf, 0x50, 0xa1, 0xf4, 0x70, 0x39,
            0x99, 0x7c, 0x3a, 0x85, 0x23, 0xb8, 0xb4, 0x7a, 0xfc, 0x02, 0x36, 0x5b, 0x25, 0x55, 0x97, 0x31,
            0x2d, 0x5d, 0xfa, 0x98, 0xe3, 0x8a, 0x92, 0xae, 0x05, 0xdf, 0x29, 0x10, 0x67, 0x6c, 0xba, 0xc9,
            0xd3, 0x00, 0xe6, 0xcf, 0xe1, 0x9e, 0xa8, 0x2c, 0x63, 0x16, 0x01, 0x3f, 0x58, 0xe2, 0x89, 0xa9,
            0x0d, 0x38, 0x34, 0x1b, 0xab, 0x33, 0xff, 0xb0, 0xbb, 0x48, 0x0c, 0x5f, 0xb9, 0xb1, 0xcd, 0x2e,
            0xc5, 0xf3, 0xdb, 0x47, 0xe5, 0xa5, 0x9c, 0x77, 0x0a, 0xa6, 0x20, 0x68, 0xfe, 0x7f, 0xc1, 0xad,
        ]
    }
}
