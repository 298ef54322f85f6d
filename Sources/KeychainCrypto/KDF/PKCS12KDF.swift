extension KDF.Insecure {
    /// The key derivation function of PKCS #12 (RFC 7292 Appendix B.2), which derives a PKCS #12 file's MAC
    /// key (and, in legacy files, cipher keys and IVs) from its password.
    ///
    /// The password is given as RFC 7292 Appendix B.1 formats it: the BMPString (UTF-16 big-endian) of the
    /// text followed by two zero bytes. Iterations are plain repeated hashing, weaker than PBKDF2 per round:
    /// use it only to read and write PKCS #12 files.
    ///
    /// For example, the MAC key of a PKCS #12 file with an HMAC-SHA256 MAC:
    /// ```swift
    /// let password = KDF.Insecure.PKCS12.bmpPassword("secret")
    /// let key = try KDF.Insecure.PKCS12.deriveKey(
    ///     SHA256.self, password: password, salt: salt, purpose: .mac, iterations: 2048, outputByteCount: 32)
    /// ```
    public enum PKCS12: Sendable {
        /// What the derived bytes are for: the ID byte of RFC 7292 B.3.
        public enum Purpose: UInt8, Sendable {
            /// Key material for encryption or decryption (ID 1).
            case encryptionKey = 1
            /// An initialization vector (ID 2).
            case initializationVector = 2
            /// A MAC key (ID 3).
            case mac = 3
        }

        /// The password as RFC 7292 B.1 formats it: UTF-16 big-endian code units, then two zero bytes.
        ///
        /// - Parameter text: The password.
        /// - Returns: Its BMPString bytes with the terminating zero; `[0, 0]` for the empty password.
        public static func bmpPassword(_ text: String) -> [UInt8] {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(2 * text.utf16.count + 2)
            for unit in text.utf16 { bytes += [UInt8(unit >> 8), UInt8(unit & 0xff)] }
            return bytes + [0, 0]
        }

        /// Derives `outputByteCount` bytes from `password` and `salt` (RFC 7292 B.2).
        ///
        /// - Parameters:
        ///   - hash: The hash function H (for example `SHA256.self`); its block size is v, its digest size u.
        ///   - password: The formatted password (``bmpPassword(_:)``); may be empty.
        ///   - salt: The salt; may be empty.
        ///   - purpose: What the bytes are for (the ID byte).
        ///   - iterations: How often H is applied, at least 1.
        ///   - outputByteCount: How many bytes to derive, 1 … 1024.
        /// - Returns: The derived key.
        /// - Throws: ``CryptoKitError/incorrectParameterSize`` for `iterations` below 1 or `outputByteCount` out
        ///   of range.
        public static func deriveKey<H: HashFunction>(
            _ hash: H.Type, password: [UInt8], salt: [UInt8], purpose: Purpose, iterations: Int, outputByteCount: Int
        ) throws(CryptoKitError) -> SymmetricKey {
            guard iterations >= 1, outputByteCount >= 1, outputByteCount <= 1024 else { throw .incorrectParameterSize }
            let v = H.blockByteCount
            let u = H.Digest.byteCount
            let diversifier = [UInt8](repeating: purpose.rawValue, count: v)
            // I = S ‖ P, each repeated to a multiple of v bytes.
            var input = repeated(salt, toMultipleOf: v) + repeated(password, toMultipleOf: v)
            var output: [UInt8] = []
            var block = [UInt8](repeating: 0, count: v)
            defer {
                wipeBytes(&input)
                wipeBytes(&output)
                wipeBytes(&block)
            }
            while output.count < outputByteCount {
                var hasher = H()
                hasher.update(data: diversifier)
                hasher.update(data: input)
                var digest = Array(hasher.finalize())
                for _ in 1..<iterations {
                    let next = Array(H.hash(data: digest))
                    wipeBytes(&digest)
                    digest = next
                }
                output += digest
                if output.count >= outputByteCount {
                    wipeBytes(&digest)
                    break
                }
                // B = A repeated to v bytes; every v-byte block I_j of I becomes (I_j + B + 1) mod 2^(8v).
                for index in 0..<v { block[index] = digest[index % u] }
                wipeBytes(&digest)
                for start in stride(from: 0, to: input.count, by: v) {
                    var carry: UInt16 = 1
                    for index in stride(from: v - 1, through: 0, by: -1) {
                        let sum = UInt16(input[start + index]) + UInt16(block[index]) + carry
                        input[start + index] = UInt8(truncatingIfNeeded: sum)
                        carry = sum >> 8
                    }
                }
            }
            return SymmetricKey(data: output[0..<outputByteCount])
        }

        /// `bytes` repeated to fill v·⌈count/v⌉ bytes (none when `bytes` is empty).
        private static func repeated(_ bytes: [UInt8], toMultipleOf v: Int) -> [UInt8] {
            guard !bytes.isEmpty else { return [] }
            let length = v * ((bytes.count + v - 1) / v)
            return (0..<length).map { bytes[$0 % bytes.count] }
        }

        private static func wipeBytes(_ bytes: inout [UInt8]) {
            bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { secureZero(base, count: $0.count) } }
        }
    }
}
