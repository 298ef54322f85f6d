/// What version 2's and version 3's logs (``RecordLogV2``, ``RecordLogV3``) share when they write through a
/// healing log (SPEC.md §26): which records may be cut, taking back the parts of a change that did not commit, and
/// appending one record of a commit so that a failure leaves the change either wholly out or reported as in the
/// file without confirmed durability. The formats differ only in the records they encode.
protocol HealingLogWriting: AnyObject {
    /// The log as this writer last verified it.
    var healingLog: HealingLog { get }
    /// The file as the healing log addresses it.
    var healingLogFile: any KeychainFileHandle { get }
    /// The key of the epoch's seals.
    var sealKey: SymmetricKey { get }
    var epoch: UInt64 { get }
    /// Where the last rewrite's records end (the header says).
    var rewriteEnd: Int { get }
    var tornTail: TornTail? { get }
    var mustReload: Bool { get set }
    var unconfirmedDurability: KeychainError? { get set }
}

extension HealingLogWriting {
    /// Throws unless the records after this log's end may be cut: a crash remnant or an undone transaction.
    func checkTailMayBeDropped() throws(KeychainError) {
        guard let tail = tornTail, tail.mayHoldAcknowledgedData else { return }
        throw .corrupted(
            offset: tail.offset,
            reason: "the last commit's records (\(tail.byteCount) bytes) do not verify and may hold committed items, so this keychain "
                + "is not changed until it is repaired")
    }

    /// The commit slots as the file holds them now, if they read.
    func rereadLog() -> HealingLog? {
        try? HealingLog(opening: healingLogFile, headerKey: sealKey, epoch: epoch, rewriteEnd: rewriteEnd)
    }

    /// Takes back what was written past the last commit, `end`, by a change that did not commit — if the slots still
    /// say `end` and the file can be cut; the next writer cuts it otherwise.
    func takeBackParts(to end: Int) {
        guard let reread = rereadLog(), reread.committedEnd == end else { return }
        try? reread.cut(to: end)
        try? reread.cutRemnant()
    }

    /// Appends `record`, which starts at log offset `position`: a part (`isLast` false) with the commit slots still
    /// naming `before`'s end and head, or the commit (`isLast`) naming itself, as `sequence` with chain value `chain`.
    ///
    /// A part that fails is taken back with the parts before it. A commit whose slot reached the file took effect even
    /// if its sync failed: it is taken back, so that the change fails as a whole, if the slot's old bytes can be put
    /// back and synced; otherwise it stands, and ``unconfirmedDurability`` says so.
    func appendRecord(
        _ record: [UInt8], at position: Int, isLast: Bool, sequence: UInt64, chain: [UInt8], before: (end: Int, head: Head)
    ) throws(KeychainError) {
        let log = healingLog
        let file = healingLogFile
        let place = Int(((log.newest?.seal.counter ?? 0) + 1) % 2)
        let displaced = isLast ? HealingLog.readTolerating(file, count: CommitSlot.length, at: HealingLayout.slotOffsets[place]) : nil
        let writtenBefore = log.writtenEnd
        do throws(KeychainError) {
            if isLast {
                try log.append(record, committedEnd: position + record.count, headSequence: sequence, headChain: chain)
            } else {
                try log.append(
                    record, committedEnd: before.end, headSequence: before.head.sequence, headChain: before.head.chainValue, flushBetween: true)
            }
        } catch {
            mustReload = true
            guard isLast, let reread = rereadLog(), reread.committedEnd == position + record.count else {
                takeBackParts(to: before.end)
                throw error
            }
            if let displaced, displaced.unreadable.isEmpty {
                let takenBack = Result { () throws(KeychainError) in
                    try displaced.bytes.withBytes { (raw) throws(KeychainError) in
                        try file.writeAll(raw, at: HealingLayout.slotOffsets[place])
                    }
                    try? file.truncate(to: HealingLayout.physicalEnd(ofLog: writtenBefore))
                    try file.sync()
                }
                if case .success = takenBack { throw error }
                // Taken back in part: what the slots say now decides whether the change is in effect.
                guard let now = rereadLog(), now.committedEnd == position + record.count else { throw error }
            }
            unconfirmedDurability = .notConfirmedDurable(
                operation: "the change", reason: "its commit is in the file, but writing or syncing it reported \(error)")
        }
    }
}
