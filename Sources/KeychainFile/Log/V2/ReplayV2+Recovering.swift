/// A recovering replay of a version 2 log (``Keychain/OpenOptions/recover``; version 3's is
/// ``recoverVersion3(keys:groupNames:followsEveryGroup:)``): every record that verifies — repaired by parity where it
/// can be — is applied as in ``ReplayV2/run()``; of one that does not, every page that still authenticates is
/// applied, and what cannot be read is listed as damage, never a reason to stop.
/// Damage costs the items of the page it hits (a page holds at most 8 KiB of entries), or the bytes up to the next
/// record that reads when a record's frame cannot be walked. Entries are applied one by one, so that one which
/// conflicts with what damage left (a deletion of an item whose put was lost) is listed, not fatal.
extension ReplayV2 {
    mutating func recover() throws(KeychainError) {
        let keys: RecordKeysV2
        switch self.keys {
        case .version2(let version2):
            keys = version2
        case .version3(let version3, let groupNames, let followsEveryGroup):
            try recoverVersion3(keys: version3, groupNames: groupNames, followsEveryGroup: followsEveryGroup)
            return
        }
        let committedEnd = log.committedEnd
        var position = outcome.end
        var head = outcome.head
        // Whether `head` is the chain tag of a record that verified, linked to the one before it (``RecoveryUndo``).
        var headVerified = true
        OpeningProgressReporting.verified(position, of: committedEnd)
        while position < committedEnd {
            startNotingChanges(at: position, headVerified: headVerified)
            var record = try? readRecord(at: position, after: head, limit: committedEnd)
            if record == nil, (try? proposeRepairs(from: position)) == true {
                record = try? readRecord(at: position, after: head, limit: committedEnd)
            }
            if let record {
                applyRecovered(record.entries, at: position)
                head = Head(epoch: head.epoch, sequence: record.sequence, chainValue: record.chain)
                position = windowStart + record.end
                headVerified = true
            } else if let scanned = scanRecord(at: position, limit: committedEnd) {
                // The frame walks: each page on its own, chained through the tags as they read.
                let listed = damage.count
                var lastOpened = false
                for page in scanned.pages {
                    do {
                        let entries = try RecordV2Decoder.openPage(page, of: scanned, in: window, previousChain: head.chainValue, keys: keys)
                        applyRecovered(entries, at: windowStart + page.box.lowerBound)
                        lastOpened = true
                    } catch {
                        lastOpened = false
                        // Each page's tag chains to the one before: past this one, the link to the pages before
                        // it cannot be checked.
                        recoveryUndo.linkUnproven(at: windowStart + page.box.lowerBound)
                        damage.append(Damage(
                            offset: HealingLayout.physical(windowStart + page.box.lowerBound), loss: .region(byteCount: page.box.count),
                            reason: "a page of record \(scanned.sequence) does not authenticate, even repaired"))
                    }
                }
                // Each page's tag chains to the one before: the last one's tag, the record's chain value, is linked
                // to the pages after the last that did not open (``RecoveryUndo/linkUnproven(at:)``), or to the head
                // before when every page opened.
                if headVerified, damage.count == listed {
                    // Every page opened, yet the record does not verify: its frame is damaged. Said, so that no
                    // damage a plain open refuses goes unlisted.
                    damage.append(Damage(
                        offset: HealingLayout.physical(position), loss: .region(byteCount: 0),
                        reason: "record \(scanned.sequence) does not verify (its frame), though every page of it opens"))
                }
                head = Head(epoch: head.epoch, sequence: scanned.sequence, chainValue: Array(window[scanned.chainRange]))
                position = windowStart + scanned.end
                headVerified = lastOpened
            } else {
                // The frame does not walk: the bytes up to the next record that verifies are lost.
                let next = nextRecord(after: position, limit: committedEnd, after: head)
                let end = next?.start ?? committedEnd
                damage.append(Damage(
                    offset: HealingLayout.physical(position), loss: .region(byteCount: end - position),
                    reason: "records whose frames cannot be read, even repaired"))
                position = end
                if let next { head = next.before }
                headVerified = false
            }
            if head.sequence == watchedSequence { watchedChain = head.chainValue }
            checkRecoveredHead(head, at: position, verified: headVerified)
            outcome.head = head
            outcome.end = position
            OpeningProgressReporting.verified(position, of: committedEnd)
        }
        checkNewestHead(head, committedEnd: committedEnd, verified: headVerified)
        listUncommitted(after: committedEnd)
    }

    /// Before the record at `position`, which follows `head`: a recovering replay notes what it changes from the last
    /// rewrite's end on (``RecoveryUndo``).
    mutating func startNotingChanges(at position: Int, headVerified: Bool) {
        guard !recoveryUndo.isActive, position >= log.rewriteEnd else { return }
        recoveryUndo.start(at: position)
        if !headVerified { recoveryUndo.linkUnproven(at: position) }
    }

    /// Notes item `id` as it is, before a recovering replay changes it.
    mutating func noteRecoveredChange(_ id: ItemID, at offset: Int) {
        recoveryUndo.note(id, at: offset, index: index, tombstones: outcome.tombstones, groups: outcome.tombstoneGroups)
    }

    /// After the records that end at `position` with `head` (`verified`: the chain tag of a record that verified): a
    /// head the header or the older commit slot names there is checked, as ``run()`` checks it. The rewrite's records
    /// ending with another head is damage to their last one. The older slot's head agreeing confirms nothing — another
    /// copy's older slot reads in its place as well — but bounds what a newest head that disagrees takes back
    /// (``RecoveryUndo/markOlderSlot(at:)``). A head that did not verify agrees with nothing: its bytes could be anyone's.
    mutating func checkRecoveredHead(_ head: Head, at position: Int, verified: Bool) {
        if !verified { recoveryUndo.linkUnproven(at: position) }
        if position == log.rewriteEnd, let rewriteHead, rewriteHead != head {
            damage.append(Damage(
                offset: HealingLayout.physical(position), loss: .region(byteCount: 0),
                reason: "the records the last rewrite wrote end with another head than its header names: the last of them is damaged"))
        }
        if let seal = log.older?.seal, Int(seal.committedEnd) == position, position >= log.rewriteEnd, verified, log.isHead(head, of: seal) {
            recoveryUndo.markOlderSlot(at: position)
        }
    }

    /// Names each item changed before the last unproven link since the last confirmed place: the head `confirmer`
    /// names confirms only what came after that link (``Damage/Loss/unconfirmed``). They are kept.
    private mutating func nameChangesBeforeBreak(confirmedBy confirmer: String) {
        guard let link = recoveryUndo.lastBreak else { return }
        let since = recoveryUndo.since
        for id in recoveryUndo.changedBeforeBreak {
            damage.append(Damage(
                offset: HealingLayout.physical(since), itemID: id, loss: .unconfirmed,
                reason: "by records from log byte \(since) on, which \(confirmer) does not confirm: the records that link them "
                    + "to it break, at log byte \(link), at a record that does not verify or bytes that cannot be read"))
        }
    }

    /// At the log's committed end: records that end, verified, with another head than the newest commit slot names
    /// are not all the ones it acknowledged (SPEC.md §25.3) — another copy's, forked from an earlier commit, verify
    /// there as well. What was applied since the older slot's end, where its head agreed, or else since the last
    /// rewrite's end, is taken back, and each item it changed is named; each item changed before the older slot's end
    /// is named unconfirmed, kept or put back as it was there; the region is listed, since the acknowledged records'
    /// entries are unknown. A head that agrees confirms what is linked to it by records that verified; a head that did
    /// not verify confirms nothing. What no head confirms is kept and named.
    mutating func checkNewestHead(_ head: Head, committedEnd: Int, verified: Bool) {
        guard let seal = log.newest?.seal, Int(seal.committedEnd) == committedEnd else { return }
        let confirmer = "the newest commit slot's head (record \(seal.headSequence))"
        guard verified else {
            recoveryUndo.linkUnproven(at: committedEnd)
            nameChangesBeforeBreak(confirmedBy: confirmer)
            return
        }
        guard !log.isHead(head, of: seal) else {
            nameChangesBeforeBreak(confirmedBy: confirmer)
            return
        }
        let noted = recoveryUndo.isActive
        let since = noted ? recoveryUndo.since : log.rewriteEnd
        let taken = recoveryUndo.takeBack(index: &index, tombstones: &outcome.tombstones, groups: &outcome.tombstoneGroups)
        let (from, restored, unconfirmed) = (noted ? taken.from : since, taken.restored, taken.unconfirmed)
        damage.append(Damage(
            offset: HealingLayout.physical(from), loss: .region(byteCount: committedEnd - from),
            reason: "the records from log byte \(from) to the committed end do not end with the head the newest commit slot names "
                + "(record \(seal.headSequence)): they may be another copy's, put over the acknowledged ones, whose entries are then lost; "
                + "what they changed is not applied"))
        for id in restored {
            damage.append(Damage(
                offset: HealingLayout.physical(from), itemID: id, loss: .conflict,
                reason: "changed by records after log byte \(from) that do not end with the head the newest commit slot names: listed as it was before them, "
                    + "or left out when a page there lost its version"))
        }
        for id in unconfirmed {
            damage.append(Damage(
                offset: HealingLayout.physical(since), itemID: id, loss: .unconfirmed,
                reason: "by records from log byte \(since) to \(from), where the older commit slot's head agrees — but another copy's older "
                    + "slot reads there as well, and the records after it do not end with the head the newest commit slot names"))
        }
    }

    /// Lists what the log holds past `committedEnd`, the end of what its commit slots show committed: a transaction
    /// that never committed, or, when no commit slot reads, every byte after the last rewrite's records — they may
    /// hold acknowledged items, and a recovering read must not drop them unsaid.
    mutating func listUncommitted(after committedEnd: Int) {
        if log.appendRefusal == .noCommitSlot, let size = try? log.file.size(), size > HealingLayout.physicalEnd(ofLog: committedEnd) {
            damage.append(Damage(
                offset: HealingLayout.physical(committedEnd), loss: .region(byteCount: size - HealingLayout.physicalEnd(ofLog: committedEnd)),
                reason: "no commit slot reads, so the log's bytes after the last rewrite's records cannot be told committed; they may hold acknowledged items"))
        } else if log.writtenEnd > committedEnd {
            damage.append(Damage(
                offset: HealingLayout.physical(committedEnd), loss: .crashRemnant(byteCount: log.writtenEnd - committedEnd),
                reason: "records of a transaction that never committed"))
        }
    }

    /// The frame of the record at `position`, walked without verifying anything, if it ends by `limit`.
    private mutating func scanRecord(at position: Int, limit: Int) -> RecordV2Decoder.Scanned? {
        guard position + 8 <= limit, (try? fill(position..<(position + 8))) != nil else { return nil }
        let at = position - windowStart
        let length = Int(window[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        guard length <= RecordV2.maximumBodyLength, position + 8 + length <= limit,
              (try? fill(position..<(position + 8 + length))) != nil
        else { return nil }
        return try? RecordV2Decoder.scan(window, at: position - windowStart)
    }

    /// The first record after `position`, before `limit`, that verifies with a later sequence number than `head`'s,
    /// chained to the 16 bytes before it (the tag that ends the record before it): where it starts, and the head
    /// before it.
    private mutating func nextRecord(after position: Int, limit: Int, after head: Head) -> (start: Int, before: Head)? {
        var candidate = position + 1
        while candidate + 8 <= limit {
            defer { candidate += 1 }
            guard (try? fill(candidate..<(candidate + 8))) != nil else { return nil }
            let at = candidate - windowStart
            let length = window[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let check = window[(at + 4)..<(at + 8)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard check == length ^ 0xFFFF_FFFF, candidate >= 16, let scanned = scanRecord(at: candidate, limit: limit),
                  scanned.sequence > head.sequence, (try? fill((candidate - 16)..<(windowStart + scanned.end))) != nil
            else { continue }
            let chain = Array(window[(candidate - 16 - windowStart)..<(candidate - windowStart)])
            let before = Head(epoch: head.epoch, sequence: scanned.sequence - 1, chainValue: chain)
            if (try? readRecord(at: candidate, after: before, limit: limit)) != nil { return (candidate, before) }
        }
        return nil
    }

    /// Applies verified entries one by one; one that cannot be applied is listed as a conflict.
    private mutating func applyRecovered(_ entries: [DecodedEntryV2], at offset: Int) {
        for entry in entries {
            switch entry {
            case .put(let id, _, _), .delete(let id, _), .tombstone(let id, _): noteRecoveredChange(id, at: offset)
            }
            switch entry {
            case .put(let id, let attributes, let box):
                let entryBytes = 1 + 4 + AttributeCoding.encodedByteCount(attributes) + 4 + 16
                let secret = RecordLogV2.sealedSecret(box: Array(window[box]), entryBytes: entryBytes)
                do {
                    try index.apply([.put(id: id, attributes: attributes, secret: secret)])
                } catch {
                    damage.append(Damage(offset: HealingLayout.physical(offset), itemID: id, loss: .conflict, reason: "\(error)"))
                }
            case .delete(let id, let time):
                outcome.tombstones[id] = time
                do {
                    try index.apply([.delete(id: id)])
                } catch {
                    damage.append(Damage(offset: HealingLayout.physical(offset), itemID: id, loss: .conflict, reason: "\(error)"))
                }
            case .tombstone(let id, let time):
                outcome.tombstones[id] = time
            }
        }
    }
}
