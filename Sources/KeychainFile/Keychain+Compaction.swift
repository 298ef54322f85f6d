import KeychainCrypto

extension Keychain {
    /// The file's live and dead bytes, after catching up with other processes.
    ///
    /// - Throws: What catching up throws (`.corrupted`, `.io`, …).
    public func statistics() throws(KeychainError) -> KeychainStatistics {
        try withRead { () throws(KeychainError) -> KeychainStatistics in statisticsLocked() }
    }

    /// When commits compact the file on their own.
    public var autoCompaction: AutoCompaction {
        get { withLock { autoCompactionSetting } }
        set { withLock { autoCompactionSetting = newValue } }
    }

    /// Why the last automatic compaction failed, if one did and no compaction has succeeded since; `nil`
    /// otherwise. A failed automatic compaction changes nothing on disk and does not fail the commit that set
    /// it off; it is tried again after 1, 3, 7, … commits (at most 1,023 in a row), and ``compact()`` tries at
    /// once.
    ///
    /// ```swift
    /// if let failure = keychain.lastAutoCompactionFailure { log.warning("keychain not compacted: \(failure)") }
    /// ```
    public var lastAutoCompactionFailure: KeychainError? { withLock { autoCompactionRetry.lastFailure } }

    /// Whether compaction and credential changes keep a file of format version 1 at version 1, for readers of
    /// this library before version 2 that must still open it. Default: `false` — the first rewrite makes it
    /// version 2 (SPEC.md §12). ``upgradeFormat()`` upgrades either way; a file of version 2 stays version 2.
    ///
    /// ```swift
    /// keychain.keepsFormatVersion = true   // older readers share this version 1 file
    /// try keychain.compact()               // still version 1
    /// ```
    public var keepsFormatVersion: Bool {
        get { withLock { keepsFormatVersionSetting } }
        set { withLock { keepsFormatVersionSetting = newValue } }
    }

    /// Rewrites the file with only its live items, in a new epoch (SPEC.md §15.1, §26.6).
    ///
    /// The new file is written beside the old one under a temporary name, made durable, renamed over it and
    /// the directory synced: a crash leaves the old file or the new one, whole. Overwritten and deleted items
    /// are not copied, so their sealed bytes are gone from the new file; the secrets that remain are sealed
    /// anew under the new epoch's key. Item persistent references stay valid. Other processes reload the new
    /// file on their next call.
    ///
    /// A file of format version 1 is rewritten as version 2, as ``upgradeFormat()`` does (SPEC.md §12), unless
    /// ``keepsFormatVersion`` is set.
    ///
    /// For example:
    /// ```swift
    /// let result = try keychain.compact()
    /// print("\(result.before.fileSize) → \(result.after.fileSize) bytes")
    /// ```
    ///
    /// - Returns: The statistics before and after.
    /// - Throws: `KeychainError.io` if the new file cannot be written (the old one is then unchanged), or what
    ///   catching up throws.
    @discardableResult
    public func compact() throws(KeychainError) -> CompactionResult {
        try withWrite { () throws(KeychainError) -> CompactionResult in try compactLocked() }
    }

    /// Compacts, as ``compact()`` says. Called inside `withWrite`.
    @discardableResult
    func compactLocked() throws(KeychainError) -> CompactionResult {
        let before = statisticsLocked()
        try rewriteLocked(changing: .keep)
        autoCompactionRetry.succeeded()
        return CompactionResult(before: before, after: statisticsLocked())
    }

    /// Rewrites the file with the live items and the key slots `change` makes, then removes stray temporary
    /// files. A version 1 file is rewritten as version 2, in the same one rewrite, unless `keepsFormatVersionSetting`.
    /// Called inside `withWrite`.
    @discardableResult
    func rewriteLocked(changing change: SlotChange) throws(KeychainError) -> KeySlotInfo? {
        if !keepsFormatVersionSetting, let old = log as? RecordLog {
            return try upgradeLocked(from: old, changing: change)
        }
        let added = try log.rewrite(changing: change, index: &index, using: &random)
        log.removeStrayTemporaryFiles()
        return added
    }

    /// Rewrites a version 1 file as version 2 and makes its log this keychain's; `false` for a file of version 2
    /// already. Called inside `withWrite`.
    func upgradeLocked() throws(KeychainError) -> Bool {
        guard let old = log as? RecordLog else { return false }
        try upgradeLocked(from: old, changing: .keep)
        return true
    }

    /// Rewrites `old`, this keychain's version 1 log, as version 2 with the slots `change` makes, and takes the new
    /// log — also when the new file is in place but its durability could not be confirmed, which is then thrown.
    @discardableResult
    private func upgradeLocked(from old: RecordLog, changing change: SlotChange) throws(KeychainError) -> KeySlotInfo? {
        let upgraded = try RecordLogV2.upgrade(from: old, changing: change, index: &index, clock: clock, using: &random)
        log = upgraded.log
        if let unconfirmed = upgraded.unconfirmed { throw unconfirmed }
        log.removeStrayTemporaryFiles()
        return upgraded.added
    }

    /// Statistics from the state in memory. Called under the lock.
    func statisticsLocked() -> KeychainStatistics {
        log.statistics(of: index)
    }
}
