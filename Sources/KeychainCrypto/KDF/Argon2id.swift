extension KDF {
    /// Argon2id (RFC 9106): the memory-hard password hash recommended for deriving keys from passwords.
    ///
    /// The first half of the first pass chooses the blocks it reads from public values only (as Argon2i
    /// does), so the timing and cache footprint of the work that first touches the memory say nothing about
    /// the password; the rest reads blocks chosen by their contents (as Argon2d does), which makes
    /// time–memory trade-offs expensive. RFC 9106 §4 recommends t = 1 and m = 2 GiB where memory allows,
    /// otherwise t = 3 and m = 64 MiB, with p = 4 and a 16-byte salt.
    ///
    /// For example:
    /// ```swift
    /// let key = try KDF.Argon2id.deriveKey(
    ///     from: Array("correct horse battery staple".utf8), salt: salt, outputByteCount: 32,
    ///     iterations: 3, memoryKiB: 64 * 1024, parallelism: 4)
    /// ```
    public enum Argon2id: Sendable {
        /// Derives a key from a password.
        ///
        /// Every parameter is checked against the limits of ``KDF/Argon2`` before memory is allocated.
        ///
        /// - Parameters:
        ///   - password: The password bytes (normalise text, for example to NFC UTF-8, before calling).
        ///   - salt: A random salt, unique per password: at least 8 bytes, 16 recommended.
        ///   - outputByteCount: The length of the key, 4 to ``KDF/Argon2/maximumOutputByteCount`` bytes.
        ///   - iterations: The number of passes t over the memory, 1 to ``KDF/Argon2/maximumIterations``.
        ///   - memoryKiB: The memory m in KiB, `8 · parallelism` to ``KDF/Argon2/maximumMemoryKiB``; it is
        ///     rounded down to a multiple of `4 · parallelism`.
        ///   - parallelism: The number of lanes p, 1 to ``KDF/Argon2/maximumParallelism``. Lanes run on up
        ///     to p threads; p is part of the result, not only of the speed.
        /// - Returns: The derived key (the Argon2 tag).
        /// - Throws: ``CryptoKitError/invalidParameter`` if `iterations`, `memoryKiB` or `parallelism` is out
        ///   of range, `iterations × memoryKiB` exceeds ``KDF/Argon2/maximumWorkKiB``, or the memory cannot
        ///   be allocated; ``CryptoKitError/incorrectParameterSize`` if `outputByteCount` is out of range or
        ///   the salt is shorter than 8 bytes.
        public static func deriveKey<Password: Sequence, Salt: Sequence>(
            from password: Password, salt: Salt, outputByteCount: Int,
            iterations: Int, memoryKiB: Int, parallelism: Int
        ) throws(CryptoKitError) -> SymmetricKey where Password.Element == UInt8, Salt.Element == UInt8 {
            try deriveKey(
                from: password, salt: salt, secret: SymmetricKey(data: [UInt8]()), associatedData: [UInt8](),
                outputByteCount: outputByteCount, iterations: iterations, memoryKiB: memoryKiB,
                parallelism: parallelism)
        }

        /// Derives a key from a password, with a secret key (a pepper) and associated data.
        ///
        /// - Parameters:
        ///   - password: The password bytes.
        ///   - salt: A random salt, unique per password: at least 8 bytes.
        ///   - secret: A secret value K hashed with the password (RFC 9106 §3.1); empty for none.
        ///   - associatedData: Associated data X hashed with the password; empty for none.
        ///   - outputByteCount: The length of the key, 4 to ``KDF/Argon2/maximumOutputByteCount`` bytes.
        ///   - iterations: The number of passes t, 1 to ``KDF/Argon2/maximumIterations``.
        ///   - memoryKiB: The memory m in KiB, `8 · parallelism` to ``KDF/Argon2/maximumMemoryKiB``.
        ///   - parallelism: The number of lanes p, 1 to ``KDF/Argon2/maximumParallelism``.
        /// - Returns: The derived key.
        /// - Throws: ``CryptoKitError/invalidParameter`` if a cost is out of range or the memory cannot be
        ///   allocated; ``CryptoKitError/incorrectParameterSize`` if `outputByteCount` or a length is out of
        ///   range (see ``deriveKey(from:salt:outputByteCount:iterations:memoryKiB:parallelism:)``).
        public static func deriveKey<Password: Sequence, Salt: Sequence, AssociatedData: Sequence>(
            from password: Password, salt: Salt, secret: SymmetricKey, associatedData: AssociatedData,
            outputByteCount: Int, iterations: Int, memoryKiB: Int, parallelism: Int
        ) throws(CryptoKitError) -> SymmetricKey
        where Password.Element == UInt8, Salt.Element == UInt8, AssociatedData.Element == UInt8 {
            try KDF.Argon2.derive(
                variant: .argon2id, password: password, salt: salt, secret: secret, associatedData: associatedData,
                outputByteCount: outputByteCount, iterations: iterations, memoryKiB: memoryKiB, parallelism: parallelism)
        }
    }
}
