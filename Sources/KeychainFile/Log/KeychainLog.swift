import KeychainCrypto

/// The keychain file as `Keychain` uses it, whatever its format version: the verified records, appending,
/// catching up with other processes, rewriting, and the key slots (SPEC.md §9, §10, §15, §16;
/// Docs/FormatVersion2.md). ``RecordLog`` is version 1's, ``RecordLogV2`` version 2's.
///
/// Not thread-safe on its own, and takes no lock file: the `Keychain` that owns it serialises every call and
/// holds the lock file as SPEC.md §16 requires.
protocol KeychainLog: AnyObject {
    var path: String { get }
    /// The file system the file is read and written through.
    var fileSystem: any FileSystem { get }
    /// The open file (read by `Keychain` to check that it may be written).
    var file: any KeychainFileHandle { get }
    /// The format version of the open file.
    var formatVersion: Int { get }
    var fileID: [UInt8] { get }
    var epoch: UInt64 { get }
    /// The master key, kept to reload a file another process rewrote and to make new key slots.
    var masterKey: SymmetricKey { get }
    /// The newest verified record.
    var head: Head { get }
    /// The end of the last verified record (a position in the file's records; appends start here).
    var end: Int { get }
    /// What follows the last verified record and was not applied, if anything.
    var tornTail: TornTail? { get }
    /// What the last read repaired from the file's redundancy, put back on disk by the next write.
    var repairs: RepairReport { get }
    /// Set for a log opened with recovery: what was read stays as it is, and nothing is written.
    var isRecoveryView: Bool { get }

    /// How long a read may trust an unchanged change counter without looking the path up (SPEC.md §16).
    var pathCheckInterval: UInt64 { get set }
    /// What the last path check that found this log current saw: the lock file's change counter, loaded just
    /// before it, and when it began.
    var lastCurrent: (counter: UInt64, at: UInt64)? { get set }
    /// Set when the state may no longer describe the file: the next catch-up reads it again whatever `stat` says.
    var mustReload: Bool { get }
    /// Whether the file changed since this log last read it (one `stat` of the path, and a read of the first
    /// sector of each header copy: ``HeaderFingerprint``).
    func hasChanged() throws(KeychainError) -> Bool
    /// Catches up with the file: records other processes appended, or another file renamed over the path.
    func refresh(_ index: inout ItemIndex, acknowledgement: [UInt8]?) throws(KeychainError)

    /// Throws for a log that must not be written (opened with recovery).
    func checkWritable() throws(KeychainError)
    /// The access groups the credential that opened the file reaches, in increasing key id; `nil` when it
    /// reaches the whole keychain (every version 1 and 2 credential does).
    var accessScope: [String]? { get }
    /// The deleted ids and their times the file keeps for merging (SPEC.md §24.4); none in version 1.
    var tombstones: [ItemID: Int64] { get }
    /// The lock file's acknowledgement of this log's head (SPEC.md §16.1), or `nil` for a format that needs none
    /// (the caller then withdraws any block an earlier file left).
    func acknowledgementBytes() -> [UInt8]?

    /// Seals `entries` as the next commit, appends it durably, and returns the sealed secrets of its puts. The
    /// caller holds the lock file exclusively, has caught up, validated the entries against its index, and
    /// applies them after this returns. `before` gives each item as it was before the commit (`nil`: not live):
    /// version 3 puts a deletion, and the deletion an item's move leaves, in the page of the item's old access group.
    func append<Entries: RandomAccessCollection<LogEntry>>(
        _ entries: Entries, before: (ItemID) -> StoredItem?, using generator: inout RandomSource
    ) throws(KeychainError) -> AppendedSecrets where Entries.Index == Int
    /// The error of the last append whose change took effect without confirmed durability, once.
    func takeUnconfirmedDurability() -> KeychainError?
    /// Decrypts the secret of a stored item.
    func decryptSecret(of item: StoredItem) throws(KeychainError) -> [UInt8]
    /// ``decryptSecret(of:)`` with the keys the log holds now, copied: for the items of a snapshot of its index, called
    /// without the keychain's lock (a merge reads another copy under that copy's lock only).
    func secretOpener() -> @Sendable (StoredItem) throws(KeychainError) -> [UInt8]
    /// What a merge compares of this copy's log to find the history it shares with another copy (SPEC.md §43.9);
    /// nil when there is nothing to compare: version 1, a recovering read, a holder scoped to groups.
    var copyHistory: CopyHistory? { get }
    /// Replays the log from its start up to the last commit that ends by `limit` (SPEC.md §43.9): the items and
    /// tombstones it left, and its end (0 when no commit ends by `limit`).
    func replayEarlierState(endingBy limit: Int) throws(KeychainError) -> (index: ItemIndex, tombstones: [ItemID: Int64], end: Int)

    /// The key slots, as the public API describes them.
    func keySlotInfos() -> [KeySlotInfo]
    /// Replaces the file with a new one in the next epoch holding the index's live items, with the key slots
    /// changed as `change` says: compaction and every credential change. Returns the slot added, if any.
    @discardableResult
    func rewrite(
        changing change: SlotChange, index: inout ItemIndex, using generator: inout RandomSource
    ) throws(KeychainError) -> KeySlotInfo?
    /// Compares each log chunk's stored parity with the parity of its verified records and, when `rewriting`,
    /// rewrites what differs after reading and verifying the file again (SPEC.md §19.5). The caller holds the lock
    /// file — shared for a check, exclusive for a rewrite — and has caught up. A format without parity reports
    /// ``ParityReport/none``.
    func scrubParity(_ index: inout ItemIndex, rewriting: Bool) throws(KeychainError) -> ParityReport
    /// Removes temporary files that a crashed rewrite left beside the keychain.
    func removeStrayTemporaryFiles()
    /// Item count, live and dead bytes, file size and epoch.
    func statistics(of index: ItemIndex) -> KeychainStatistics
}

extension KeychainLog {
    var accessScope: [String]? { nil }
    var tombstones: [ItemID: Int64] { [:] }

    /// ``append(_:before:using:)`` for entries that add items only (tests): no item was live before.
    func append<Entries: RandomAccessCollection<LogEntry>>(
        _ entries: Entries, using generator: inout RandomSource
    ) throws(KeychainError) -> AppendedSecrets where Entries.Index == Int {
        try append(entries, before: { _ in nil }, using: &generator)
    }

    /// Whether a read may skip the path check: the lock file's change counter, loaded now, is the one loaded
    /// before the last check that found this log current, and that check began less than
    /// ``pathCheckInterval`` before `now`. Every process that holds the lock file exclusively adds one to the
    /// counter before releasing it, so an unchanged counter means no process following §16 appended, cut or
    /// replaced the file since. `counter` is `nil` when the lock file's counter could not be mapped.
    func isKnownCurrent(counter: UInt64?, now: UInt64) -> Bool {
        guard !mustReload, let counter, let lastCurrent else { return false }
        return counter == lastCurrent.counter && now &- lastCurrent.at < pathCheckInterval
    }

    /// Records that a path check which began at `at`, with the change counter `counter` loaded before it,
    /// found this log current (or caught it up).
    func noteCurrent(counter: UInt64?, at: UInt64) {
        lastCurrent = counter.map { ($0, at) }
    }
}
