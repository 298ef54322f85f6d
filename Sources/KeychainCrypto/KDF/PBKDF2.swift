extension KDF.Insecure {
    /// PBKDF2 (RFC 8018 §5.2) with HMAC-SHA256: stretches a password into a key.
    ///
    /// The HMAC key schedule is computed once and each iteration then costs exactly two SHA-256
    /// compressions, with the padding of the 32-byte messages known at compile time.
    ///
    /// For example:
    /// ```swift
    /// let key = try KDF.Insecure.PBKDF2.deriveKey(
    ///     from: Array("correct horse battery staple".utf8), salt: salt,
    ///     using: .sha256, outputByteCount: 32, rounds: 600_000)
    /// ```
    public struct PBKDF2: Sendable {
        /// The least number of rounds ``deriveKey(from:salt:using:outputByteCount:rounds:)`` accepts, as in
        /// swift-crypto (OWASP's 2023 advice for PBKDF2-HMAC-SHA256 is 600,000).
        public static let minimumRounds = 210_000

        /// The hash functions PBKDF2 can use here.
        public struct HashFunction: Equatable, Hashable, Sendable {
            let name: String
            /// HMAC-SHA256, the only one implemented.
            public static let sha256 = HashFunction(name: "sha256")
        }

        /// Derives a key from a password with at least ``minimumRounds`` rounds.
        ///
        /// - Parameters:
        ///   - password: The password bytes (normalise text, for example to NFC UTF-8, before calling).
        ///   - salt: A random salt, unique per password.
        ///   - hashFunction: The PRF's hash; `.sha256`.
        ///   - outputByteCount: The length of the key, at least 1.
        ///   - rounds: The iteration count, at least ``minimumRounds``.
        /// - Returns: The derived key.
        /// - Throws: ``CryptoKitError/incorrectParameterSize`` if `rounds` is below ``minimumRounds`` or
        ///   `outputByteCount` is out of range.
        @inlinable
        public static func deriveKey<Password: Sequence, Salt: Sequence>(
            from password: Password, salt: Salt, using hashFunction: HashFunction,
            outputByteCount: Int, rounds: Int
        ) throws(CryptoKitError) -> SymmetricKey where Password.Element == UInt8, Salt.Element == UInt8 {
            guard rounds >= minimumRounds else { throw .incorrectParameterSize }
            return try deriveKey(
                from: password, salt: salt, using: hashFunction, outputByteCount: outputByteCount,
                unsafeUncheckedRounds: rounds)
        }

        /// Derives a key from a password with any positive number of rounds.
        ///
        /// - Warning: Few rounds make the key cheap to guess. This variant exists for published test
        ///   vectors and fast test fixtures; protect real passwords with
        ///   ``deriveKey(from:salt:using:outputByteCount:rounds:)``.
        ///
        /// - Parameters:
        ///   - password: The password bytes.
        ///   - salt: The salt.
        ///   - hashFunction: The PRF's hash; `.sha256`.
        ///   - outputByteCount: The length of the key, at least 1.
        ///   - unsafeUncheckedRounds: The iteration count, at least 1.
        /// - Returns: The derived key.
        /// - Throws: ``CryptoKitError/incorrectParameterSize`` if `unsafeUncheckedRounds` is below 1 or
        ///   `outputByteCount` is out of range.
        @inlinable
        public static func deriveKey<Password: Sequence, Salt: Sequence>(
            from password: Password, salt: Salt, using hashFunction: HashFunction,
            outputByteCount: Int, unsafeUncheckedRounds: Int
        ) throws(CryptoKitError) -> SymmetricKey where Password.Element == UInt8, Salt.Element == UInt8 {
            let passwordKey = SymmetricKey(data: password)
            return try withContiguousBytes(of: salt) { (saltBytes) throws(CryptoKitError) -> SymmetricKey in
                try deriveSHA256(
                    password: passwordKey, salt: saltBytes, outputByteCount: outputByteCount,
                    rounds: unsafeUncheckedRounds)
            }
        }

        @usableFromInline
        static func deriveSHA256(
            password: SymmetricKey, salt: UnsafeRawBufferPointer, outputByteCount: Int, rounds: Int
        ) throws(CryptoKitError) -> SymmetricKey {
            // RFC 8018 §5.2 step 1: dkLen ≤ (2^32 − 1) × hLen. Keys far shorter than that are all anyone
            // needs; the bound here keeps the block counter within UInt32 on every platform.
            guard rounds >= 1, outputByteCount >= 1, outputByteCount <= 32 * Int(Int32.max) else {
                throw .incorrectParameterSize
            }
            let keyed = HMAC<SHA256>(key: password)
            let innerStart = keyed.innerHasher.state
            let outerStart = keyed.outerHasher.state
            let blockCount = (outputByteCount + 31) / 32

            return SymmetricKey(count: outputByteCount) { output in
                for blockIndex in 1...blockCount {
                    // U1 = HMAC(P, S ‖ INT(i)), through the general HMAC: the salt has any length.
                    var first = keyed
                    first.update(bufferPointer: salt)
                    let counter = UInt32(blockIndex).bigEndian
                    withUnsafeBytes(of: counter) { first.update(bufferPointer: $0) }
                    var u = first.finalize().digest.words
                    var t = u

                    // U2 … Uc: each one HMAC of the 32-byte previous U, i.e. one inner and one outer
                    // compression of a single padded block (0x80, zeros, bit length 768 = (64 + 32) × 8).
                    var round = 1
                    while round < rounds {
                        var inner = innerStart
                        inner.compress(u.h0, u.h1, u.h2, u.h3, u.h4, u.h5, u.h6, u.h7,
                                       0x8000_0000, 0, 0, 0, 0, 0, 0, 768)
                        var outer = outerStart
                        outer.compress(inner.h0, inner.h1, inner.h2, inner.h3, inner.h4, inner.h5, inner.h6, inner.h7,
                                       0x8000_0000, 0, 0, 0, 0, 0, 0, 768)
                        u = outer
                        t.h0 ^= u.h0; t.h1 ^= u.h1; t.h2 ^= u.h2; t.h3 ^= u.h3
                        t.h4 ^= u.h4; t.h5 ^= u.h5; t.h6 ^= u.h6; t.h7 ^= u.h7
                        round += 1
                    }

                    let block = SHA256Digest(state: t)
                    let offset = (blockIndex - 1) * 32
                    let taken = min(32, outputByteCount - offset)
                    block.withUnsafeBytes { bytes in
                        (output.baseAddress! + offset).copyMemory(from: bytes.baseAddress!, byteCount: taken)
                    }
                    u = .initial
                    t = .initial
                }
            }
        }
    }
}

extension SHA256Digest {
    /// The digest as the eight big-endian words of a chaining value.
    var words: SHA256.State {
        withUnsafeBytes { bytes in
            let base = bytes.baseAddress!
            return SHA256.State(
                h0: base.loadBigEndianUInt32(at: 0), h1: base.loadBigEndianUInt32(at: 4),
                h2: base.loadBigEndianUInt32(at: 8), h3: base.loadBigEndianUInt32(at: 12),
                h4: base.loadBigEndianUInt32(at: 16), h5: base.loadBigEndianUInt32(at: 20),
                h6: base.loadBigEndianUInt32(at: 24), h7: base.loadBigEndianUInt32(at: 28))
        }
    }
}
