#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Salvage and repair of a version 3 file (SPEC.md §37.6; §17 for version 1).
extension RecordLogV3 {
    /// Writes to `destination` a version 3 keychain holding every item of the version 3 file at `path` that still
    /// authenticates — repaired by parity where it can be (``ReplayV2/recoverVersion3(keys:groupNames:followsEveryGroup:)``)
    /// — and says what could not be read. The damaged file is not changed. The new file keeps the file id, the key
    /// slots, the log key and the key table (every group's keys), in the next epoch, with the tombstones the damaged
    /// file's records still held, each in its group.
    ///
    /// - Parameter replacing: Whether `destination` is `path` itself, renamed over (a repair, under the exclusive
    ///   lock), rather than a new file linked into place.
    /// - Throws: `.invalidParameter` for a credential scoped to some access groups: the new file is written from the
    ///   items read, and such a credential reads only its own groups'.
    static func salvage<Generator: RandomNumberGenerator>(
        from path: String, credential: Credential, to destination: String, replacing: Bool,
        fileSystem: any FileSystem, using generator: inout Generator
    ) throws(KeychainError) -> SalvageReport {
        let clock: @Sendable () -> Date = { Date() }
        // The log owns the file from here: it closes it when it goes, or when opening throws.
        let (log, index, damage) = try openRecovering(
            at: path, file: try fileSystem.openExisting(path), credential: credential, expectedHead: nil, fileSystem: fileSystem, clock: clock)
        let state = log.state
        guard let root = state.root, !state.groups.isScoped else { throw scopedRefusal }
        guard log.epoch < UInt64.max else { throw .limitReached("the epoch counter is exhausted") }
        let keys = FileKeys(
            fileID: log.fileID, logKey: state.logKey, root: root, groups: state.groups, sealedKeyTable: state.header.sealedKeyTable,
            slots: state.header.slots, tombstoneHorizonDays: state.header.tombstoneHorizonDays)
        let order = index.positionsInAddedOrder()
        let written = try writeFile(
            at: destination, replacing: replacing, keys: keys, epoch: log.epoch + 1, itemCount: order.count,
            item: { index.item(atPosition: Int(order[$0])) },
            decryptSecret: { (item) throws(KeychainError) in try log.decryptSecret(of: item) },
            tombstones: state.replayed.tombstones.filter { index.position(of: $0.key) == nil && state.replayed.tombstoneGroups[$0.key] != nil },
            tombstoneGroups: state.replayed.tombstoneGroups, fileSystem: fileSystem, using: &generator)
        written.state.file.close()
        return SalvageReport(
            itemCount: order.count, recordsKept: log.head.sequence, keptHead: log.head, damages: damage,
            droppedByteCount: SalvageReport.droppedByteCount(of: damage), tornTail: log.tornTail, newHead: written.state.replayed.head)
    }

    /// Throws unless the file at `path` may be repaired in place with `credential`: writable, with one name, and
    /// opened by the credential with every access group in reach (its header runs read and a slot opened; the
    /// records are not read).
    static func checkRepairable(at path: String, credential: Credential, fileSystem: any FileSystem) throws(KeychainError) {
        let file = try fileSystem.openRepairable(path)
        defer { file.close() }
        let read = { (offset: Int, count: Int) throws(KeychainError) -> [UInt8] in HealingLog.readTolerating(file, count: count, at: offset).bytes }
        let opened = try OpenedHeaderV3(read: read, credential: credential)
        guard opened.slot.keys.root != nil else { throw scopedRefusal }
    }

    private static var scopedRefusal: KeychainError {
        .invalidParameter(
            "this credential reaches only some access groups; salvaging or repairing a keychain rewrites every group's items, "
                + "and takes a credential that reaches the whole keychain")
    }
}
