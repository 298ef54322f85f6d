import KeychainCrypto

/// How much of a keychain file is live, and how much compaction would reclaim.
public struct KeychainStatistics: Sendable, Equatable, CustomStringConvertible {
    /// The number of live items.
    public let itemCount: Int
    /// The header plus the put entries that wrote the live items (their boxes and framing): about what a
    /// compacted file holds.
    public let liveBytes: Int
    /// Everything else up to the end of the last record: overwritten and deleted items, deletion entries,
    /// transaction framing.
    public let deadBytes: Int
    /// The file's size, a torn tail included.
    public let fileSize: Int
    /// The file's epoch (1, plus one for each compaction or credential change).
    public let epoch: UInt64

    /// `deadBytes` as a share of the file, 0 … 1.
    public var deadShare: Double { fileSize == 0 ? 0 : Double(deadBytes) / Double(fileSize) }

    public var description: String {
        "\(itemCount) items, \(liveBytes) live bytes, \(deadBytes) dead bytes, \(fileSize) bytes in the file, epoch \(epoch)"
    }
}

/// When a commit compacts the keychain file on its own: once dead bytes pass a share of the file and the file
/// is at least a minimum size.
///
/// For example:
/// ```swift
/// var options = Keychain.OpenOptions()
/// options.autoCompaction = AutoCompaction(deadShare: 0.3, minimumFileSize: 4 << 20)
/// ```
public struct AutoCompaction: Sendable, Equatable {
    /// The dead share of the file (0 … 1) past which a commit compacts.
    public var deadShare: Double
    /// Files smaller than this are never compacted automatically.
    public var minimumFileSize: Int

    /// - Parameters:
    ///   - deadShare: The dead share past which a commit compacts (0 … 1).
    ///   - minimumFileSize: The smallest file compacted automatically, in bytes.
    public init(deadShare: Double, minimumFileSize: Int) {
        self.deadShare = deadShare
        self.minimumFileSize = minimumFileSize
    }

    /// Compact when more than half of a file of at least 1 MiB is dead.
    public static let standard = AutoCompaction(deadShare: 0.5, minimumFileSize: 1 << 20)
    /// Never compact automatically; ``Keychain/compact()`` still does on request.
    public static let disabled = AutoCompaction(deadShare: .infinity, minimumFileSize: .max)

    func isDue(_ statistics: KeychainStatistics) -> Bool {
        statistics.fileSize >= minimumFileSize && statistics.deadShare > deadShare
    }
}

/// What a compaction did.
public struct CompactionResult: Sendable, Equatable {
    /// The file before.
    public let before: KeychainStatistics
    /// The file after.
    public let after: KeychainStatistics
}

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

    /// Rewrites the file with only its live items, in a new epoch (SPEC.md §15.1).
    ///
    /// The new file is written beside the old one under a temporary name, made durable, renamed over it and
    /// the directory synced: a crash leaves the old file or the new one, whole. Overwritten and deleted items
    /// are not copied, so their sealed bytes are gone from the new file; the secrets that remain are sealed
    /// anew under the new epoch's key. Item persistent references stay valid. Other processes reload the new
    /// file on their next call.
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

    /// Compacts. Called inside `withWrite`.
    @discardableResult
    func compactLocked() throws(KeychainError) -> CompactionResult {
        let before = statisticsLocked()
        try rewriteLocked(slots: log.header.slots, masterKey: log.masterKey)
        return CompactionResult(before: before, after: statisticsLocked())
    }

    /// Rewrites the file with the live items, `slots` and `masterKey`, then removes stray temporary files.
    /// Called inside `withWrite`.
    func rewriteLocked(slots: [KeySlot], masterKey: SymmetricKey) throws(KeychainError) {
        try log.rewrite(slots: slots, masterKey: masterKey, index: &index, using: &random)
        log.removeStrayTemporaryFiles()
    }

    /// Statistics from the state in memory. Called under the lock.
    func statisticsLocked() -> KeychainStatistics {
        let live = log.headerLength + index.liveEntryBytes
        return KeychainStatistics(
            itemCount: index.count, liveBytes: live, deadBytes: max(0, log.end - live),
            fileSize: log.end + (log.tornTail?.byteCount ?? 0), epoch: log.header.epoch)
    }
}
