/// What ``Keychain/salvage(from:credential:to:)`` kept and could not read.
public struct SalvageReport: Sendable, Equatable {
    /// Something the damaged file held that could not be read (``KeychainFile/Damage``).
    public typealias Damage = KeychainFile.Damage

    /// The items written to the new keychain: every item whose boxes authenticate.
    public let itemCount: Int
    /// The sequence number of the last record read in the damaged file.
    public let recordsKept: UInt64
    /// The damaged file's head after the last record read.
    public let keptHead: Head
    /// Everything that could not be read, in file order; empty when the whole file verified.
    public let damages: [Damage]
    /// The bytes of the damaged file whose structure could not be read at all, or that a crash left unacknowledged.
    public let droppedByteCount: Int
    /// A torn final record that was a known crash remnant, if that is all that was wrong.
    public let tornTail: TornTail?
    /// The head of the new keychain.
    public let newHead: Head

    /// The first damage, or `nil` if nothing was damaged.
    public var damage: Damage? { damages.first }
    /// The ids of the items whose latest version could not be read (and which the new keychain does not hold).
    public var lostItemIDs: [ItemID] { damages.compactMap { $0.loss == .item ? $0.itemID : nil } }
}

extension Keychain {
    /// Writes a new keychain at `destination` with every item of `source` whose boxes still authenticate, and
    /// reports what could not be read (SPEC.md §17). `source` is not changed.
    ///
    /// Damage costs only what it hits: records after a damaged box are kept, an item whose latest version cannot
    /// be read is left out (never replaced by an older version), and each loss is reported with its offset and,
    /// where it can be authenticated, its item id. The new file keeps the damaged file's id and key slots (the
    /// same credentials open it) in the next epoch. The header must be intact: without it nothing can be
    /// decrypted.
    ///
    /// For example:
    /// ```swift
    /// let report = try Keychain.salvage(from: "secrets.kcf", credential: .password(pw), to: "secrets-salvaged.kcf")
    /// for damage in report.damages { print(damage) }
    /// ```
    ///
    /// - Parameters:
    ///   - source: The damaged keychain file.
    ///   - credential: A password or key that opens it.
    ///   - destination: Where to write the new keychain; nothing may exist there.
    /// - Returns: What was kept and what could not be read.
    /// - Throws: `KeychainError.wrongCredentials`; `.corrupted` if the header is damaged; `.notAKeychain`;
    ///   `.invalidParameter` if `destination` exists; `.io`.
    public static func salvage(
        from source: String, credential: Credential, to destination: String
    ) throws(KeychainError) -> SalvageReport {
        var random = RandomSource(SystemRandomNumberGenerator())
        let fileSystem = PosixFileSystem()
        return try withAcknowledgement(of: source, fileSystem: fileSystem) { (acknowledgement) throws(KeychainError) in
            try RecordLog.salvage(
                from: source, credential: credential, to: destination, acknowledgement: acknowledgement, fileSystem: fileSystem,
                using: &random)
        }
    }

    /// Calls `body` with the acknowledgement in the lock file beside `path` (SPEC.md §16.1), read under a shared
    /// lock that is held for the call, or with `nil` when there is no lock file: none is created for a read.
    static func withAcknowledgement<Result>(
        of path: String, fileSystem: any FileSystem, _ body: ([UInt8]?) throws(KeychainError) -> Result
    ) throws(KeychainError) -> Result {
        let lockPath = lockFilePath(for: path)
        guard fileSystem.exists(lockPath), let lockFile = try? fileSystem.openLock(lockPath),
              (try? lockFile.lock(exclusive: false, wait: true)) == true else {
            return try body(nil)
        }
        defer { lockFile.unlock() }
        return try body(lockFile.readAcknowledgement())
    }
}
