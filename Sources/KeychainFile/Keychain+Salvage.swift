/// What ``Keychain/salvage(from:credential:to:)`` kept and dropped.
public struct SalvageReport: Sendable, Equatable {
    /// Where the damaged file stopped verifying.
    public struct Damage: Sendable, Equatable {
        /// The byte offset of the damaged structure.
        public let offset: Int
        /// What was wrong.
        public let reason: String
    }

    /// The items written to the new keychain.
    public let itemCount: Int
    /// How many records of the damaged file verified and were kept (every record before the damage).
    public let recordsKept: UInt64
    /// The damaged file's head after the last record kept.
    public let keptHead: Head
    /// The first damage, or `nil` if the whole file verified.
    public let damage: Damage?
    /// The bytes of the damaged file after the last record kept: the damage and everything after it (records
    /// there may have been whole, but cannot be applied without what the damage destroyed).
    public let droppedByteCount: Int
    /// A torn final record that was dropped, if that is all that was wrong.
    public let tornTail: TornTail?
    /// The head of the new keychain.
    public let newHead: Head
}

extension Keychain {
    /// Writes a new keychain at `destination` with every item of the records of `source` that verify before
    /// the first damage, and reports what was dropped (SPEC.md §17). `source` is not changed.
    ///
    /// The new file keeps the damaged file's id and key slots (the same credentials open it) in the next
    /// epoch. The header must be intact: without it nothing can be decrypted.
    ///
    /// For example:
    /// ```swift
    /// let report = try Keychain.salvage(from: "secrets.kcf", credential: .password(pw), to: "secrets-salvaged.kcf")
    /// if let damage = report.damage { print("dropped \(report.droppedByteCount) bytes from \(damage.offset): \(damage.reason)") }
    /// ```
    ///
    /// - Parameters:
    ///   - source: The damaged keychain file.
    ///   - credential: A password or key that opens it.
    ///   - destination: Where to write the new keychain; nothing may exist there.
    /// - Returns: What was kept and dropped.
    /// - Throws: `KeychainError.wrongCredentials`; `.corrupted` if the header is damaged; `.notAKeychain`;
    ///   `.invalidParameter` if `destination` exists; `.io`.
    public static func salvage(
        from source: String, credential: Credential, to destination: String
    ) throws(KeychainError) -> SalvageReport {
        var random = RandomSource(SystemRandomNumberGenerator())
        return try RecordLog.salvage(
            from: source, credential: credential, to: destination, fileSystem: PosixFileSystem(), using: &random)
    }
}
