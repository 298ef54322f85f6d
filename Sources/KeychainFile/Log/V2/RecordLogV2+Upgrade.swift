#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Rewriting a version 1 file as format version 2 (Docs/FormatVersion2.md §4).
extension RecordLogV2 {
    /// A version 1 file rewritten as version 2: the new log, the slot the change added, and — when the new file is
    /// in place but could not be confirmed durable — that error, for the caller to throw once it has taken the log.
    struct Upgraded {
        let log: RecordLogV2
        let added: KeySlotInfo?
        let unconfirmed: KeychainError?
    }

    /// Rewrites version 1's file as a version 2 file in the next epoch, holding the index's live items in the order
    /// they were added, with the same file id, and the key slots `change` makes — in this one rewrite, so that a
    /// change that is refused leaves the file as it was, of version 1. The slot the opening credential opens
    /// becomes a committed slot (with its PBKDF2 rounds, or HKDF for a key); every other slot is kept as a legacy
    /// slot, whose credential opens the file as before. The caller holds the lock file exclusively and has caught
    /// up; the index's items get the secrets sealed in the new file once it is in place.
    ///
    /// - Throws: `.corrupted` when the file ends in a record that may hold acknowledged items, `.io` when the new
    ///   file cannot be written (the old one is then unchanged), `.limitReached` when the slots do not fit, what
    ///   the change throws (``applying(_:to:masterKey:fileID:positionOpenedBy:positionOfID:using:)``) — all before
    ///   anything is written.
    static func upgrade(
        from old: RecordLog, changing change: SlotChange = .keep, index: inout ItemIndex,
        clock: @escaping @Sendable () -> Date, using generator: inout RandomSource
    ) throws(KeychainError) -> Upgraded {
        try old.checkWritable()
        guard old.header.epoch < UInt64.max else { throw .limitReached("the epoch counter is exhausted") }
        // A rewrite keeps only the verified records: it must not drop a tail that may hold acknowledged ones.
        if try old.file.size() != old.end { try old.checkTailMayBeDropped() }
        guard let opened = try RecordLog.slotIndex(in: old.header, openedBy: old.credential) else { throw .wrongCredentials }
        let openedSlot = old.header.slots[opened.index]
        var slots = old.header.slots.map { HeaderKeySlot.legacy($0) }
        slots[opened.index] = try makeSlots(
            for: [old.credential], masterKey: old.masterKey, fileID: old.fileID,
            keyDerivation: .pbkdf2(.kept(openedSlot.iterations)), using: &generator)[0]
        // The version 2 slots stand where version 1's did: a credential or id finds its slot by version 1's header.
        let header = old.header
        let applied = try applying(
            change, to: slots, masterKey: old.masterKey, fileID: old.fileID,
            positionOpenedBy: { (credential) throws(KeychainError) -> Int in
                guard let found = try RecordLog.slotIndex(in: header, openedBy: credential) else { throw .wrongCredentials }
                return found.index
            },
            positionOfID: { (id) in header.slots.firstIndex { $0.slotID == id } }, using: &generator)
        try checkSlotLimits(applied.slots)
        let order = index.positionsInAddedOrder()
        var upgraded: RecordLogV2? = nil
        var placed: [SealedSecret]? = nil
        defer {
            // The new file holds the same items in the same order: only where their secrets are sealed changed.
            if let placed {
                for (rank, secret) in placed.enumerated() { index.replaceSecret(atPosition: Int(order[rank]), with: secret) }
            }
        }
        var unconfirmed: KeychainError? = nil
        do throws(KeychainError) {
            _ = try writeFile(
                at: old.path, replacing: true, fileID: old.fileID, epoch: old.epoch + 1, slots: applied.slots,
                masterKey: applied.masterKey, itemCount: order.count, item: { index.item(atPosition: Int(order[$0])) },
                decryptSecret: { (item) throws(KeychainError) in try old.decryptSecret(of: item) }, tombstones: [:],
                fileSystem: old.fileSystem, using: &generator,
                afterRename: { (written) in
                    upgraded = RecordLogV2(
                        path: old.path, fileSystem: old.fileSystem, credential: change.credential(after: old.credential), clock: clock,
                        state: written.state)
                    placed = written.secrets
                })
        } catch {
            // In place but not confirmed durable: the new log is the file's now, whatever the caller is told.
            guard upgraded != nil else { throw error }
            unconfirmed = error
        }
        guard let upgraded else { throw .invalidParameter("internal error: the version 2 file was written but not put in place") }
        return Upgraded(log: upgraded, added: applied.added, unconfirmed: unconfirmed)
    }
}

extension RecordLogV2 {
    /// The version 2 file another process put at `old`'s path when it upgraded it, opened with the master key
    /// `old` holds (or its credential, after a rotation), or `nil` when the file at the path is not of version 2.
    ///
    /// - Throws: `.corrupted` when the version 2 file is another keychain (a different file id) or does not
    ///   contain `old`'s head, or what opening it throws.
    static func openUpgraded(
        replacing old: RecordLog, clock: @escaping @Sendable () -> Date
    ) throws(KeychainError) -> (RecordLogV2, ItemIndex)? {
        let file = try old.fileSystem.openExisting(old.path)
        do throws(KeychainError) {
            guard try isVersion2(file) else {
                file.close()
                return nil
            }
            let loaded = try load(
                file: file, credential: old.credential, heldKey: old.masterKey, pin: old.head,
                memoryLimitKiB: KeyDerivationBudget.standardMemoryLimitKiB, refused: &old.headerRefusingCredential)
            guard loaded.state.header.fileID == old.fileID else {
                throw KeychainError.corrupted(offset: 16, reason: "another keychain (a different file id) was put at \(old.path)")
            }
            return (RecordLogV2(path: old.path, fileSystem: old.fileSystem, credential: old.credential, clock: clock, state: loaded.state), loaded.index)
        } catch {
            file.close()
            throw error
        }
    }
}
