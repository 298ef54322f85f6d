/// The fork check of Docs/FormatVersion2.md §3: a seal counts only if its head is the one the records give at
/// its committed end. Only the replay knows the records' heads, so it tells the log after reading them.
extension HealingLog {
    /// Checks the commit slots' heads against the heads the replay computed.
    ///
    /// A seal whose head is not the records' at its committed end belongs to a history that was cut and
    /// written over (a fork: a retried commit whose first try reached the disk late, or a slot from before
    /// records were dropped). The older slot is then ignored: it is no longer the older commit, its parity
    /// proposes nothing, and the newest commit's write is taken to have begun at the rewrite end. The newest
    /// slot cannot be ignored the same way — what the records past the older commit are would be unknown — so
    /// the log refuses appends, and the caller reports the file as damaged until it is repaired.
    ///
    /// - Parameter replayedHead: The head (epoch, sequence number and chain value) of the verified record
    ///   ending at a logical offset, or `nil` if no verified record ends there: records that do not verify are
    ///   damage (§3 rule 1) or set aside (rule 2), not a fork.
    /// - Throws: `KeychainError.corrupted` if the newest slot's head is not the records'.
    ///
    /// For example:
    /// ```swift
    /// try log.checkHeads { offset in replay.headsByEnd[offset] }
    /// ```
    func checkHeads(_ replayedHead: (Int) -> Head?) throws(KeychainError) {
        if let seal = older?.seal, let head = replayedHead(Int(seal.committedEnd)), !isHead(head, of: seal) {
            older = nil
            lastWrite = min(rewriteEnd, writtenEnd)..<writtenEnd
        }
        if let seal = newest?.seal, let head = replayedHead(Int(seal.committedEnd)), !isHead(head, of: seal) {
            appendRefusal = .forkedNewestSlot
            throw .corrupted(
                offset: HealingLayout.slotOffsets[Int(seal.counter % 2)],
                reason: "the newest commit slot says the record ending at log byte \(seal.committedEnd) is number \(seal.headSequence), "
                    + "but the records there give number \(head.sequence) of epoch \(head.epoch) (or another chain value): the slot "
                    + "belongs to a history that was cut and written over")
        }
    }

    /// Whether `head` is the one `seal` names.
    func isHead(_ head: Head, of seal: Seal) -> Bool {
        head.epoch == seal.epoch && head.sequence == seal.headSequence && head.chainValue == seal.headChain
    }
}
