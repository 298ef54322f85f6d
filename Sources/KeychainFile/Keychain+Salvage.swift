#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What ``Keychain/salvage(from:credential:to:)`` and ``Keychain/repair(at:credential:keepingCopyAt:)`` kept and
/// could not read.
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

    /// The bytes of unreadable regions and crash remnants among `damages`.
    static func droppedByteCount(of damages: [Damage]) -> Int {
        damages.reduce(0) { total, damage in
            switch damage.loss {
            case .region(let count), .crashRemnant(let count): return total + count
            default: return total
            }
        }
    }
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
    ///   `.invalidParameter` if `destination` exists, or for a version 3 file and a credential scoped to some of
    ///   its access groups (salvage rewrites every group); `.io`.
    public static func salvage(
        from source: String, credential: Credential, to destination: String
    ) throws(KeychainError) -> SalvageReport {
        var random = RandomSource(SystemRandomNumberGenerator())
        let fileSystem = PosixFileSystem()
        try credential.validate()
        if try isVersion3(source, fileSystem: fileSystem) {
            return try RecordLogV3.salvage(
                from: source, credential: credential, to: destination, replacing: false, fileSystem: fileSystem, using: &random)
        }
        if try isVersion2(source, fileSystem: fileSystem) {
            return try RecordLogV2.salvage(
                from: source, credential: credential, to: destination, replacing: false, fileSystem: fileSystem, using: &random)
        }
        return try withAcknowledgement(of: source, fileSystem: fileSystem) { (acknowledgement) throws(KeychainError) in
            try RecordLog.salvage(
                from: source, credential: credential, to: destination, acknowledgement: acknowledgement, fileSystem: fileSystem,
                using: &random).report
        }
    }

    /// Repairs a damaged keychain in place: keeps a copy of the file at `backup`, then rewrites it with every
    /// item that still authenticates, as ``salvage(from:credential:to:)`` would, and renames the new file over
    /// it (SPEC.md §15.1, §17). The only way, besides salvage, to drop a torn tail that may hold acknowledged
    /// data (``TornTail/mayHoldAcknowledgedData``), or to write again to a file damaged before its end.
    ///
    /// Runs under the lock file's exclusive lock; processes that have the keychain open reload the new file. The
    /// credentials stay the same.
    ///
    /// For example:
    /// ```swift
    /// let report = try Keychain.repair(at: "secrets.kcf", credential: .password(pw), keepingCopyAt: "secrets.kcf.damaged")
    /// for damage in report.damages { print("lost: \(damage)") }
    /// ```
    ///
    /// - Parameters:
    ///   - path: The damaged keychain file.
    ///   - credential: A password or key that opens it.
    ///   - backup: Where to keep the copy of the damaged file; nothing may exist there.
    /// - Returns: What was kept and what could not be read.
    /// - Throws: `KeychainError.wrongCredentials`; `.corrupted` if the header is damaged; `.readOnly` for a file
    ///   no write may change (read-only, or with several hard links); `.invalidParameter` if `backup` exists, or
    ///   for a version 3 file and a credential scoped to some of its access groups; `.io`. Nothing is copied before
    ///   the credential is checked, and nothing is changed unless the copy was made durable first.
    public static func repair(at path: String, credential: Credential, keepingCopyAt backup: String) throws(KeychainError) -> SalvageReport {
        var random = RandomSource(SystemRandomNumberGenerator())
        return try repair(at: path, credential: credential, keepingCopyAt: backup, fileSystem: PosixFileSystem(), using: &random)
    }

    static func repair<Generator: RandomNumberGenerator>(
        at path: String, credential: Credential, keepingCopyAt backup: String, fileSystem: any FileSystem, using random: inout Generator
    ) throws(KeychainError) -> SalvageReport {
        try credential.validate()
        // Through a symbolic link, the target is repaired (and the link kept), as a rewrite does (SPEC.md §15.1).
        let path = try fileSystem.resolve(path, creating: false)
        guard fileSystem.exists(path) else { throw .io(operation: "open", errno: ENOENT, path: path) }
        guard !fileSystem.exists(backup) else { throw .invalidParameter("a file already exists at \(backup)") }
        let (lockFile, lockReadOnly) = try fileSystem.openLockForExistingKeychain(lockFilePath(for: path))
        if let lockReadOnly { throw .readOnly(path: path, reason: lockReadOnly.description) }
        _ = try lockFile.lock(exclusive: true, wait: true)
        defer { lockFile.unlock() }
        // The same refusals as any write, and the credential, before anything is copied.
        if try isVersion3(path, fileSystem: fileSystem) {
            try RecordLogV3.checkRepairable(at: path, credential: credential, fileSystem: fileSystem)
            try copyFile(path, to: backup, fileSystem: fileSystem)
            let report = try RecordLogV3.salvage(
                from: path, credential: credential, to: path, replacing: true, fileSystem: fileSystem, using: &random)
            try? lockFile.withdrawAcknowledgement()
            return report
        }
        if try isVersion2(path, fileSystem: fileSystem) {
            try RecordLogV2.checkRepairable(at: path, credential: credential, fileSystem: fileSystem)
            try copyFile(path, to: backup, fileSystem: fileSystem)
            let report = try RecordLogV2.salvage(
                from: path, credential: credential, to: path, replacing: true, fileSystem: fileSystem, using: &random)
            // Version 2 needs no acknowledgement: a block an earlier version 1 file left says nothing about this one.
            try? lockFile.withdrawAcknowledgement()
            return report
        }
        try RecordLog.checkRepairable(at: path, credential: credential, fileSystem: fileSystem)
        try copyFile(path, to: backup, fileSystem: fileSystem)
        let (report, acknowledgement) = try RecordLog.salvage(
            from: path, credential: credential, to: path, replacing: true, acknowledgement: lockFile.readAcknowledgement(),
            fileSystem: fileSystem, using: &random)
        try? lockFile.writeAcknowledgement(acknowledgement)
        return report
    }

    /// Whether the file at `path` is of format version 3 (read from a handle of its own, closed again).
    private static func isVersion3(_ path: String, fileSystem: any FileSystem) throws(KeychainError) -> Bool {
        let file = try fileSystem.openExisting(path)
        defer { file.close() }
        return try RecordLogV3.isVersion3(file)
    }

    /// Whether the file at `path` is of format version 2 (read from a handle of its own, closed again).
    private static func isVersion2(_ path: String, fileSystem: any FileSystem) throws(KeychainError) -> Bool {
        let file = try fileSystem.openExisting(path)
        defer { file.close() }
        return try RecordLogV2.isVersion2(file)
    }

    /// Copies `source` to a new file `destination` (mode 0600, failing if it exists) and makes it durable.
    static func copyFile(_ source: String, to destination: String, fileSystem: any FileSystem) throws(KeychainError) {
        let input = try fileSystem.openExisting(source)
        defer { input.close() }
        let output = try fileSystem.createExclusive(destination)
        defer { output.close() }
        let size = try input.size()
        var offset = 0
        while offset < size {
            let chunk = try input.readExactly(count: min(1 << 20, size - offset), at: offset)
            try chunk.withBytes { (bytes) throws(KeychainError) in try output.writeAll(bytes, at: offset) }
            offset += chunk.count
        }
        try output.sync()
        try fileSystem.syncDirectory(containing: destination)
    }

    /// Calls `body` with the acknowledgement in the lock file beside `path` (SPEC.md §16.1), read under a shared
    /// lock that is held for the call, or with `nil` when there is no lock file: none is created for a read.
    static func withAcknowledgement<Result>(
        of path: String, fileSystem: any FileSystem, _ body: ([UInt8]?) throws(KeychainError) -> Result
    ) throws(KeychainError) -> Result {
        let lockPath = lockFilePath(for: (try? fileSystem.resolve(path, creating: false)) ?? path)
        guard fileSystem.exists(lockPath), let lockFile = try? fileSystem.openLockReadOnly(lockPath),
              (try? lockFile.lock(exclusive: false, wait: true)) == true else {
            return try body(nil)
        }
        defer { lockFile.unlock() }
        return try body(lockFile.readAcknowledgement())
    }
}
