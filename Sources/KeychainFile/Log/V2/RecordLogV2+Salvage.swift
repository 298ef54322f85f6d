#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Salvage and repair of a version 2 file (Docs/FormatVersion2.md §3; SPEC.md §17 for version 1).
extension RecordLogV2 {
    /// Writes to `destination` a version 2 keychain holding every item of the version 2 file at `path`
    /// that still authenticates — repaired by parity where it can be (``ReplayV2/recover()``) — and says what
    /// could not be read. The damaged file is not changed. The new file keeps the file id, the key slots and the
    /// master key, in the next epoch, with the tombstones the damaged file's records still held.
    ///
    /// - Parameter replacing: Whether `destination` is `path` itself, renamed over (a repair, under the
    ///   exclusive lock), rather than a new file linked into place.
    static func salvage<Generator: RandomNumberGenerator>(
        from path: String, credential: Credential, to destination: String, replacing: Bool,
        fileSystem: any FileSystem, using generator: inout Generator
    ) throws(KeychainError) -> SalvageReport {
        let clock: @Sendable () -> Date = { Date() }
        // The log owns the file from here: it closes it when it goes, or when opening throws.
        let (log, index, damage) = try openRecovering(
            at: path, file: try fileSystem.openExisting(path), credential: credential, expectedHead: nil, fileSystem: fileSystem, clock: clock)
        guard log.epoch < UInt64.max else { throw .limitReached("the epoch counter is exhausted") }
        let order = index.positionsInAddedOrder()
        let written = try writeFile(
            at: destination, replacing: replacing, fileID: log.fileID, epoch: log.epoch + 1, slots: log.state.header.slots,
            masterKey: log.masterKey, itemCount: order.count, item: { index.item(atPosition: Int(order[$0])) },
            decryptSecret: { (item) throws(KeychainError) in try log.decryptSecret(of: item) },
            tombstones: log.state.replayed.tombstones.filter { index.position(of: $0.key) == nil }, fileSystem: fileSystem,
            using: &generator)
        written.state.file.close()
        return SalvageReport(
            itemCount: order.count, recordsKept: log.head.sequence, keptHead: log.head, damages: damage,
            droppedByteCount: SalvageReport.droppedByteCount(of: damage), tornTail: log.tornTail, newHead: written.state.replayed.head)
    }
}

extension RecordLogV2 {
    /// Throws unless the file at `path` may be repaired in place with `credential`: writable, with one name, and
    /// opened by the credential (its header copies read, a slot opened and the MAC checked; the records are not read).
    static func checkRepairable(at path: String, credential: Credential, fileSystem: any FileSystem) throws(KeychainError) {
        let file = try fileSystem.openRepairable(path)
        defer { file.close() }
        let pageA = HealingLog.readTolerating(file, count: HealingLayout.headerPageLength, at: 0).bytes
        let pageB = HealingLog.readTolerating(file, count: HealingLayout.headerPageLength, at: HealingLayout.headerBOffset).bytes
        _ = try OpenedHeaderV2(pageA: pageA, pageB: pageB, credential: credential)
    }
}
