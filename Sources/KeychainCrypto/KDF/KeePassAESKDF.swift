extension KDF {
    /// KeePass's AES-KDF: the 32-byte composite key encrypted `rounds` times with AES-256 in ECB mode under
    /// a 32-byte seed, then hashed with SHA-256. The key derivation of KDBX 3 and, by choice, of KDBX 4.
    ///
    /// It is a slow hash only through its round count, chosen by whoever wrote the file: a reader bounds it
    /// (see ``maximumRounds``) before calling.
    ///
    /// For example:
    /// ```swift
    /// let transformed = try KDF.KeePassAES.transform(compositeKey, seed: seed, rounds: 60_000)
    /// ```
    public enum KeePassAES: Sendable {
        /// The most rounds ``transform(_:seed:rounds:)`` runs: about a minute of work on a slow machine.
        public static let maximumRounds: UInt64 = 100_000_000

        /// The transformed key: SHA-256 of the composite key after `rounds` AES-256-ECB encryptions.
        ///
        /// - Parameters:
        ///   - compositeKey: 32 bytes.
        ///   - seed: The AES-256 key, 32 bytes.
        ///   - rounds: How many times each of the two blocks is encrypted, at most ``maximumRounds``.
        /// - Returns: 32 bytes.
        /// - Throws: ``CryptoKitError/incorrectParameterSize`` when the key or seed is not 32 bytes;
        ///   ``CryptoKitError/invalidParameter`` when `rounds` is over ``maximumRounds``.
        public static func transform(_ compositeKey: [UInt8], seed: [UInt8], rounds: UInt64) throws(CryptoKitError) -> [UInt8] {
            guard compositeKey.count == 32, seed.count == 32 else { throw .incorrectParameterSize }
            guard rounds <= maximumRounds else { throw .invalidParameter }
            let keys = try SymmetricKey(data: seed).withUnsafeBytes { (bytes) throws(CryptoKitError) in
                try AESRoundKeys(key: bytes, direction: .encryption)
            }
            var blocks = compositeKey
            blocks.withUnsafeMutableBytes { buffer in
                var remaining = rounds
                while remaining > 0 {
                    transformBlocks(buffer.baseAddress!, count: 2, keys: keys, direction: .encryption)
                    remaining -= 1
                }
            }
            let digest = Array(SHA256.hash(data: blocks))
            blocks.withUnsafeMutableBytes { secureZero($0.baseAddress!, count: $0.count) }
            return digest
        }
    }
}
