/// A recovering replay of a version 3 log (``Keychain/OpenOptions/recover``, SPEC.md §37.6): every record that
/// verifies — repaired by parity where it can be — is applied as ``ReplayV2/run()`` applies it; of one that does not,
/// every page that still opens in its group's chain is applied, and what cannot be read is listed as damage, never a
/// reason to stop.
///
/// Damage costs the entries of the page it hits (a page holds at most 8 KiB of them), one item when only its secret
/// box is hit, or the bytes up to the next record whose frame reads when a record's frame cannot be walked. Each
/// group's chain goes on past its lost pages (``RecoveringChainV3``), and a commit's heads put it back where its
/// writer left it. Pages that open past damage to their chain wait for such heads to confirm them, and are named and
/// not applied when none do. Entries are applied one by one, so that one which conflicts with what damage left is
/// listed, not fatal. A scoped holder follows its own groups only: other groups' segments are not read, only counted
/// against each commit's heads (SPEC.md §37.4) where damage has not made the count unknown.
extension ReplayV2 {
    mutating func recoverVersion3(keys: RecordKeysV3, groupNames: [UInt8: String], followsEveryGroup: Bool) throws(KeychainError) {
        let committedEnd = log.committedEnd
        var position = outcome.end
        var head = outcome.head
        var chains = outcome.groups.mapValues(RecoveringChainV3.init)
        // Pages opened and not yet applied, in log order: held ones, and those that wait behind them.
        var heldPages = HeldPagesV3()
        // Whether `head` is the chain tag of a record that verified: what tells a record that does not verify from one
        // read after damage, whose link to the record before cannot be checked.
        var headVerified = true
        // A scoped holder's count of the other groups' segments, checked at each commit as a plain open checks it
        // (SPEC.md §37.4); lost with damage read by rule 2 or 3, and set again by the heads of the next record that
        // verifies (§37.6 rule 1).
        var others = outcome.others
        var othersKnown = true
        OpeningProgressReporting.verified(position, of: committedEnd)
        while position < committedEnd {
            startNotingChanges(at: position, headVerified: headVerified)
            // The record as a replay verifies it, while every chain is at a place proven: the common case, and
            // what parity repaired.
            var groups = chains.mapValues(\.chain)
            var record: ReplayedRecordV2? = nil
            // Why the record failed to verify as the next one of this file, when it was read so.
            var refusal: KeychainError? = nil
            if heldPages.isEmpty, chains.values.allSatisfy(\.isProven) {
                var moved = groups
                var movedOthers = others
                let check: OtherHeadsCheckV3 = othersKnown ? .report : .anchor
                do {
                    record = try readRecordForReplay(
                        at: position, after: head, limit: committedEnd, groups: &moved, others: &movedOthers, otherHeads: check)
                } catch { refusal = error }
                if record == nil, (try? proposeRepairs(from: position)) == true {
                    moved = groups
                    movedOthers = others
                    do {
                        record = try readRecordForReplay(
                            at: position, after: head, limit: committedEnd, groups: &moved, others: &movedOthers, otherHeads: check)
                    } catch { refusal = error }
                }
                groups = moved
                if record != nil { others = movedOthers }
            } else {
                _ = try? proposeRepairs(from: position)
            }
            if let record, record.violation == nil {
                if record.heads != nil { othersKnown = true }
                if let mismatch = record.otherHeadsMismatch {
                    // Pages of a group this holder cannot read were dropped, added or replaced: its own are applied.
                    damage.append(Damage(
                        offset: HealingLayout.physical(position), loss: .region(byteCount: 0),
                        reason: "record \(record.sequence) verifies, but not against the pages of a group this credential cannot read (\(mismatch)); that group's holders refuse the file"))
                }
                applyVerifiedV3(record, groupNames: groupNames, at: position)
                if let heads = record.heads {
                    // The heads matched every followed chain: each is where its writer left it.
                    chains = groups.mapValues(RecoveringChainV3.init)
                    outcome.heads = heads
                } else {
                    // A part: the chains its pages moved are known again; the others keep what damage left unknown.
                    for (keyID, chain) in groups where chain.sequence != chains[keyID]?.sequence {
                        chains[keyID] = RecoveringChainV3(chain)
                    }
                }
                head = Head(epoch: head.epoch, sequence: record.sequence, chainValue: record.chain)
                position = windowStart + record.end
                headVerified = true
            } else if let walked = walkRecordV3(at: position, limit: committedEnd) {
                // The frame walks, as far as its segment headers read: each page on its own, in its group's chain.
                // A sequence number the frame check does not confirm is taken to be the next.
                let sequence = walked.frameCheckPasses ? walked.sequence : head.sequence &+ 1
                let listed = damage.count
                if !followsEveryGroup {
                    checkOtherHeads(of: walked, sequence: sequence, keys: keys, others: others, followed: chains.mapValues(\.chain))
                }
                applyPagesV3(
                    of: walked, sequence: sequence, keys: keys, groupNames: groupNames, followsEveryGroup: followsEveryGroup, chains: &chains,
                    heldPages: &heldPages)
                if !walked.isComplete {
                    let from = windowStart + walked.walkedEnd, to = windowStart + walked.chainTag.lowerBound
                    damage.append(Damage(
                        offset: HealingLayout.physical(from), loss: .region(byteCount: to - from),
                        reason: "the rest of record \(sequence), whose segment headers cannot be read, even repaired"))
                    for keyID in chains.keys { chains[keyID]?.regionLost(byteCount: to - from) }
                }
                let verified = (try? RecordV3Decoder.decode(window, at: walked.start, previousChain: head.chainValue, keys: keys)) != nil
                if !verified, headVerified, damage.count == listed {
                    // Every page this reader follows opened, yet the record does not verify: what is damaged is
                    // another group's page or the record's tags. Said, so that no damage a plain open refuses goes unlisted.
                    damage.append(Damage(
                        offset: HealingLayout.physical(position), loss: .region(byteCount: 0),
                        reason: "record \(sequence) does not verify (its chain tag or heads), though every page of it this credential reads opens"))
                } else if verified, let refusal, damage.count == listed {
                    // It verifies on its own, but a plain open refuses it here (another group's heads past damage,
                    // its sequence), and nothing its pages showed said why: said, for the same reason.
                    var reason = "\(refusal)"
                    if case .corrupted(_, let why) = refusal { reason = why }
                    damage.append(Damage(
                        offset: HealingLayout.physical(position), loss: .region(byteCount: 0),
                        reason: "record \(sequence) verifies on its own, but not as the next record of this file: \(reason)"))
                }
                // The chain tag binds the frame and every page's tag to the record before: when it matches, the
                // record is linked to it though a page's bytes behind its tag are damaged (SPEC.md §35.8). When the tag
                // itself is damaged, the one the record's bytes compute stands for it if what follows proves it.
                let stored = Array(window[walked.chainTag])
                let linked = verified || chainTagMatches(of: walked, after: head.chainValue, keys: keys)
                let end = windowStart + walked.end
                let computed = linked ? nil : provenComputedChainTag(
                    of: walked, sequence: sequence, after: head, keys: keys, committedEnd: committedEnd)
                head = Head(epoch: head.epoch, sequence: sequence, chainValue: computed ?? stored)
                position = end
                headVerified = linked || computed != nil
                othersKnown = false
            } else {
                // The frame does not walk: the bytes up to the next record whose frame reads are lost.
                let next = nextRecordV3(after: position, limit: committedEnd, after: head)
                let end = next?.start ?? committedEnd
                damage.append(Damage(
                    offset: HealingLayout.physical(position), loss: .region(byteCount: end - position),
                    reason: "records whose frames cannot be read, even repaired"))
                for keyID in chains.keys { chains[keyID]?.regionLost(byteCount: end - position) }
                position = end
                if let next { head = next.before }
                headVerified = false
                othersKnown = false
            }
            if head.sequence == watchedSequence { watchedChain = head.chainValue }
            checkRecoveredHead(head, at: position, verified: headVerified)
            outcome.head = head
            outcome.end = position
            OpeningProgressReporting.verified(position, of: committedEnd)
        }
        for keyID in chains.keys.sorted() {
            guard let chain = chains[keyID] else { continue }
            nameUnconfirmed(chain.abandoned, keyID: keyID, because: "another page of the group was lost after it")
            nameUnconfirmed(chain.held, keyID: keyID, because: "no commit's heads after it read")
            heldPages.resolve((chain.abandoned + chain.held).map(\.ticket), confirmed: false)
            chains[keyID]?.held = []
            chains[keyID]?.abandoned = []
        }
        applyRecoveredPagesV3(heldPages.takeResolved(), groupNames: groupNames)
        checkNewestHead(head, committedEnd: committedEnd, verified: headVerified)
        outcome.groups = chains.mapValues(\.chain)
        outcome.others = others
        listUncommitted(after: committedEnd)
    }

    /// Whether the chain tag of `walked`, whose frame may be damaged, matches after `previousChain` (SPEC.md §35.8).
    private func chainTagMatches(of walked: WalkedRecordV3, after previousChain: [UInt8], keys: RecordKeysV3) -> Bool {
        guard walked.frameCheckPasses, let scanned = try? RecordV3Decoder.scan(window, at: walked.start) else { return false }
        let expected = ChainTagV3.compute(
            chainKey: keys.chainKey, previousChain: previousChain, bytes: window, start: walked.start, segments: scanned.segments)
        return ChainTagV3.matches(window[scanned.chainTag], expected)
    }

    /// The chain tag `walked` computes after `head` when the record's own does not match: it stands for that tag
    /// when what follows proves it — the next record's chain tag matches after it, or, at the committed end, the
    /// newest commit slot's head names it (SPEC.md §25.3). `nil` when nothing proves it.
    private mutating func provenComputedChainTag(
        of walked: WalkedRecordV3, sequence: UInt64, after head: Head, keys: RecordKeysV3, committedEnd: Int
    ) -> [UInt8]? {
        guard walked.frameCheckPasses, let scanned = try? RecordV3Decoder.scan(window, at: walked.start) else { return nil }
        let computed = ChainTagV3.compute(
            chainKey: keys.chainKey, previousChain: head.chainValue, bytes: window, start: walked.start, segments: scanned.segments)
        let end = windowStart + walked.end
        if end == committedEnd {
            guard let seal = log.newest?.seal, Int(seal.committedEnd) == committedEnd,
                  log.isHead(Head(epoch: head.epoch, sequence: sequence, chainValue: computed), of: seal)
            else { return nil }
            return computed
        }
        // Walking the next record may move the window: `walked`'s ranges are not read after it.
        guard let next = walkRecordV3(at: end, limit: committedEnd), chainTagMatches(of: next, after: computed, keys: keys) else { return nil }
        return computed
    }

    /// A scoped holder's check of the heads of a record read by rule 2 against what its count still shows of the groups
    /// it does not follow, a lower bound past damage (SPEC.md §37.6 rule 1): heads that drop a group counted or named
    /// before, give it another start epoch or put it behind its segments read are listed.
    private mutating func checkOtherHeads(
        of walked: WalkedRecordV3, sequence: UInt64, keys: RecordKeysV3, others: [UInt8: OpaqueChainV3], followed: [UInt8: GroupChainV3]
    ) {
        guard let box = walked.heads, let heads = try? HeadsV3.open(window, box: box.pageBox, keys: keys, sequence: sequence, base: 0) else { return }
        do {
            _ = try RecordV3ReplayDecoder.anchored(others, segmentsHere: [], to: heads, of: sequence, at: 0, followed: followed, keys: keys)
        } catch {
            var reason = "\(error)"
            if case .corrupted(_, let why) = error { reason = why }
            damage.append(Damage(
                offset: HealingLayout.physical(windowStart + box.range.lowerBound), loss: .region(byteCount: 0),
                reason: "\(reason), though a group this credential cannot read is never removed nor moved back; that group's holders refuse the file"))
        }
    }

    /// Applies the pages of a record that does not verify whole, each as the next page of its group's chain, then
    /// puts the chains at the record's heads if they open. A page opened past damage to its chain is held, and every
    /// page after it waits behind it in `heldPages`, until heads confirm or drop it.
    private mutating func applyPagesV3(
        of walked: WalkedRecordV3, sequence: UInt64, keys: RecordKeysV3, groupNames: [UInt8: String], followsEveryGroup: Bool,
        chains: inout [UInt8: RecoveringChainV3], heldPages: inout HeldPagesV3
    ) {
        for (number, segment) in walked.groupSegments.enumerated() {
            let offset = windowStart + segment.range.lowerBound
            guard var chain = chains[segment.keyID] else {
                if followsEveryGroup {
                    damage.append(Damage(
                        offset: HealingLayout.physical(offset), loss: .region(byteCount: segment.range.count),
                        reason: "a segment of record \(sequence) names key id \(segment.keyID), a group the key table does not hold"))
                }
                continue
            }
            var damaged: [DamagedSecretV3] = []
            if let entries = chain.open(segment, in: window, place: "record \(sequence), segment \(number)", damagedSecrets: &damaged) {
                var page = pageEntriesV3(entries, keyID: segment.keyID, groupNames: groupNames, at: offset)
                page.damagedPuts = damaged.filter { !$0.superseded }.map(\.id)
                page.record = sequence
                if chain.isProven {
                    heldPages.append(page)
                } else {
                    page.ticket = heldPages.hold(page)
                    chain.held.append(page)
                }
            } else {
                damage.append(Damage(
                    offset: HealingLayout.physical(offset), loss: .region(byteCount: segment.range.count),
                    reason: "a page of group \(segment.keyID) in record \(sequence) does not open in its chain, even repaired"))
            }
            for lost in damaged where lost.superseded {
                damage.append(Damage(
                    offset: HealingLayout.physical(windowStart + lost.box.lowerBound), itemID: lost.id, loss: .region(byteCount: lost.box.count),
                    reason: "in a page of group \(segment.keyID) of record \(sequence): \(lost.reason); a later entry of the page names the item, so this "
                        + "version was not its last, and nothing acknowledged is lost with it"))
            }
            for lost in damaged where !lost.superseded {
                // The item's latest version is lost: the page takes it out when it is applied (``PageEntriesV3/damagedPuts``).
                damage.append(Damage(
                    offset: HealingLayout.physical(windowStart + lost.box.lowerBound), itemID: lost.id, loss: .item,
                    reason: "in a page of group \(segment.keyID) of record \(sequence): \(lost.reason)"))
            }
            chains[segment.keyID] = chain
        }
        if let box = walked.heads, let heads = try? HeadsV3.open(window, box: box.pageBox, keys: keys, sequence: sequence, base: 0) {
            synchronizeV3(chains: &chains, to: heads, of: sequence, at: HealingLayout.physical(windowStart + box.range.lowerBound), heldPages: &heldPages)
        }
        applyRecoveredPagesV3(heldPages.takeResolved(), groupNames: groupNames)
    }

    /// Puts each followed group's chain at its head in `heads`, the heads of record `sequence` at file offset `offset`
    /// (SPEC.md §37.6 rule 5), confirming or dropping its held pages.
    private mutating func synchronizeV3(
        chains: inout [UInt8: RecoveringChainV3], to heads: HeadsV3, of sequence: UInt64, at offset: Int, heldPages: inout HeldPagesV3
    ) {
        var refused = false
        for keyID in chains.keys.sorted() {
            guard var chain = chains[keyID] else { continue }
            guard let groupHead = heads[keyID] else {
                // Every commit names every group (SPEC.md §35.7): a head dropped, perhaps with the group's pages.
                refused = true
                damage.append(Damage(
                    offset: offset, loss: .region(byteCount: 0),
                    reason: "record \(sequence)'s heads do not name group \(keyID), which every commit names: its head was dropped, perhaps with pages of the group, and these heads are not followed for it"))
                continue
            }
            let read = chain.sequence
            nameUnconfirmed(chain.abandoned, keyID: keyID, because: "another page of the group was lost after it")
            heldPages.resolve(chain.abandoned.map(\.ticket), confirmed: false)
            chain.abandoned = []
            switch chain.synchronize(to: groupHead) {
            case .confirmed(let held):
                heldPages.resolve(held.map(\.ticket), confirmed: true)
            case .moved(let dropped):
                nameUnconfirmed(dropped, keyID: keyID, because: "record \(sequence)'s heads put the chain elsewhere")
                heldPages.resolve(dropped.map(\.ticket), confirmed: false)
            case .refused(ahead: true):
                refused = true
                damage.append(Damage(
                    offset: offset, loss: .region(byteCount: 0),
                    reason: "record \(sequence)'s heads put group \(keyID) at page \(groupHead.groupSequence), where its pages read end at page \(read) and none was lost: pages of the group are missing, and these heads are not followed"))
            case .refused(ahead: false):
                refused = true
                damage.append(Damage(
                    offset: offset, loss: .region(byteCount: 0),
                    reason: "record \(sequence)'s heads put group \(keyID) at page \(groupHead.groupSequence) of start epoch \(groupHead.startEpoch), behind page \(chain.provenSequence) of start epoch \(chain.startEpoch), which opened in its chain: no writer makes such heads, and they are not followed"))
            }
            chains[keyID] = chain
        }
        // Heads some of which are not followed are not what a writer's next commit would start from.
        if !refused { outcome.heads = heads }
    }

    /// Lists every item that pages opened past damage to group `keyID`'s chain touch, pages no heads confirmed: they
    /// are not applied, since a page spliced in from an older copy of the file opens just as well there.
    private mutating func nameUnconfirmed(_ pages: [PageEntriesV3], keyID: UInt8, because reason: String) {
        for page in pages {
            for id in page.itemIDs {
                damage.append(Damage(
                    offset: HealingLayout.physical(page.offset), itemID: id, loss: .conflict,
                    reason: "a page of group \(keyID) opened only past damage to its chain, and \(reason) (it may be an older copy's page): not applied; the item may be listed at an older version, or although it was deleted"))
            }
        }
    }

    /// Applies a record that verified: as one change when its entries keep every item in its group (SPEC.md §36) and
    /// apply together, else entry by entry (``applyRecoveredV3(_:deletions:placements:at:groupNames:)``).
    private mutating func applyVerifiedV3(_ record: ReplayedRecordV2, groupNames: [UInt8: String], at offset: Int) {
        let keyIDs = Dictionary(groupNames.map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var touched: [ItemID: UInt8] = [:]
        for placement in record.placements { noteRecoveredChange(placement.id, at: offset) }
        if (try? checkGroups(of: record, keyIDs: keyIDs, touched: &touched, at: offset)) != nil, (try? index.apply(record.entries)) != nil {
            for (id, time) in record.deletionTimes { outcome.tombstones[id] = time }
            for placement in record.placements where placement.kind != .put { outcome.tombstoneGroups[placement.id] = placement.keyID }
            return
        }
        applyRecoveredV3(record.entries, deletions: record.deletionTimes, placements: record.placements, at: offset, groupNames: groupNames)
    }

    /// The entries of a page of group `keyID`, copied out of ``window``, to apply as
    /// ``applyRecoveredV3(_:deletions:placements:at:groupNames:)`` does; a put naming another group than the page's is
    /// listed as a conflict and left out.
    private mutating func pageEntriesV3(_ entries: [DecodedEntryV2], keyID: UInt8, groupNames: [UInt8: String], at offset: Int) -> PageEntriesV3 {
        var page = PageEntriesV3(offset: offset)
        page.keyID = keyID
        for entry in entries {
            switch entry {
            case .put(let id, let attributes, let box):
                guard groupNames[keyID] == AccessGroupsV3.name(of: attributes) else {
                    damage.append(Damage(
                        offset: HealingLayout.physical(offset), itemID: id, loss: .conflict,
                        reason: "a page of group \(keyID) puts it with access group \"\(AccessGroupsV3.name(of: attributes))\", another group's"))
                    continue
                }
                page.entries.append(RecordV2PagesDecoder.put(id, attributes, box: box, in: window))
                page.placements.append((id, keyID, .put))
            case .delete(let id, let time):
                page.entries.append(.delete(id: id))
                page.deletions.append((id, time))
                page.placements.append((id, keyID, .delete))
            case .tombstone(let id, let time):
                page.deletions.append((id, time))
                page.placements.append((id, keyID, .tombstone))
            }
        }
        return page
    }

    /// Applies pages taken from ``HeldPagesV3``, in order: the pages of one record together, as one change, when their
    /// entries keep every item in its group and the index takes them together (SPEC.md §37.6 rule 7: an exchange of two
    /// items' primary keys, say), else entry by entry.
    private mutating func applyRecoveredPagesV3(_ pages: [PageEntriesV3], groupNames: [UInt8: String]) {
        var start = pages.startIndex
        while start < pages.endIndex {
            var end = start + 1
            while end < pages.endIndex, pages[end].record == pages[start].record { end += 1 }
            if !applyTogetherV3(pages[start..<end], groupNames: groupNames) {
                for page in pages[start..<end] { applyRecoveredV3(page, groupNames: groupNames) }
            }
            start = end
        }
    }

    /// Applies pages of one record as one change, if each put, deletion and tombstone keeps its item in its group
    /// (§36, judged as ``checkGroups(of:keyIDs:touched:at:)`` judges a record) and the index takes their entries
    /// together: whether it did. Nothing is applied when it did not.
    private mutating func applyTogetherV3(_ pages: ArraySlice<PageEntriesV3>, groupNames: [UInt8: String]) -> Bool {
        // The group each item touched so far is live in after the entries before (`.some(nil)`: deleted by them).
        var touched: [ItemID: String?] = [:]
        for page in pages {
            for placement in page.placements {
                guard let name = groupNames[placement.keyID] else { return false }
                let live: String? = touched[placement.id] ?? index[placement.id].map { AccessGroupsV3.name(of: $0.attributes) }
                if let live, live != name { return false }
                switch placement.kind {
                case .put: touched[placement.id] = .some(name)
                case .delete: touched[placement.id] = .some(nil)
                case .tombstone: continue
                }
            }
        }
        for page in pages {
            for id in page.itemIDs { noteRecoveredChange(id, at: page.offset) }
        }
        guard (try? index.apply(pages.flatMap(\.entries))) != nil else { return false }
        for (position, page) in pages.enumerated() {
            for placement in page.placements where placement.kind != .put {
                guard let time = page.deletions.first(where: { $0.0 == placement.id })?.1 else { continue }
                outcome.tombstones[placement.id] = time
                outcome.tombstoneGroups[placement.id] = placement.keyID
            }
            // A later page of the record that names the item supersedes the lost version, as one page's later entry does.
            let later = Set(pages.dropFirst(position + 1).flatMap(\.itemIDs))
            takeOutDamagedPuts(of: page, groupNames: groupNames, except: later)
        }
        return true
    }

    /// Takes out each item whose put in `page` lost its secret box, never served at an older version — unless it is
    /// live in another group than the page's, which the put could not have moved it from (SPEC.md §36): a conflict.
    private mutating func takeOutDamagedPuts(of page: PageEntriesV3, groupNames: [UInt8: String], except superseded: Set<ItemID> = []) {
        for id in page.damagedPuts where !superseded.contains(id) {
            guard let item = index[id] else { continue }
            let live = AccessGroupsV3.name(of: item.attributes)
            guard live == groupNames[page.keyID] else {
                damage.append(Damage(
                    offset: HealingLayout.physical(page.offset), itemID: id, loss: .conflict,
                    reason: "a page of group \(page.keyID) puts an item live in group \"\(live)\", with a secret box that does not authenticate: the item is kept"))
                continue
            }
            noteRecoveredChange(id, at: page.offset)
            recoveryUndo.noteTakenOut(id, at: page.offset)
            try? index.apply([.delete(id: id)])
        }
    }

    /// Applies a page's entries one by one (``applyRecoveredV3(_:deletions:placements:at:groupNames:)``), then takes
    /// out the items whose put in it lost its secret box.
    private mutating func applyRecoveredV3(_ page: PageEntriesV3, groupNames: [UInt8: String]) {
        applyRecoveredV3(page.entries, deletions: page.deletions, placements: page.placements, at: page.offset, groupNames: groupNames)
        takeOutDamagedPuts(of: page, groupNames: groupNames)
    }

    /// Applies verified entries one by one, a conflict listed rather than fatal, and keeps each deletion's and
    /// tombstone's time and group. An entry of an item live in another group than its page's (SPEC.md §36: only a
    /// writer holding both groups' keys makes one) is a conflict, not applied.
    ///
    /// - Parameter placements: every put, deletion and tombstone in order, with its page's key id; `entries` are its
    ///   puts and deletions, in the same order.
    private mutating func applyRecoveredV3(
        _ entries: [DecodedEntry], deletions: [(ItemID, Int64)], placements: [(id: ItemID, keyID: UInt8, kind: ReplayedRecordV2.Placement)],
        at offset: Int, groupNames: [UInt8: String]
    ) {
        var next = entries.startIndex
        for placement in placements {
            noteRecoveredChange(placement.id, at: offset)
            var entry: DecodedEntry? = nil
            if placement.kind != .tombstone, next < entries.endIndex {
                entry = entries[next]
                next += 1
            }
            if let live = index[placement.id].map({ AccessGroupsV3.name(of: $0.attributes) }), live != groupNames[placement.keyID] {
                damage.append(Damage(
                    offset: HealingLayout.physical(offset), itemID: placement.id, loss: .conflict,
                    reason: "a page of group \(placement.keyID) \(placement.kind == .put ? "puts" : "deletes") an item live in group \"\(live)\""))
                continue
            }
            if placement.kind != .put, let time = deletions.first(where: { $0.0 == placement.id })?.1 {
                outcome.tombstones[placement.id] = time
                outcome.tombstoneGroups[placement.id] = placement.keyID
            }
            guard let entry else { continue }
            do {
                try index.apply([entry])
            } catch {
                damage.append(Damage(offset: HealingLayout.physical(offset), itemID: placement.id, loss: .conflict, reason: "\(error)"))
            }
        }
    }

    /// The record at `position` walked (``WalkedRecordV3``), if its length check passes and it ends by `limit`; its
    /// ranges are in ``window``.
    private mutating func walkRecordV3(at position: Int, limit: Int) -> WalkedRecordV3? {
        guard let at = loadRecordBytes(at: position, limit: limit) else { return nil }
        return WalkedRecordV3.walk(window, at: at)
    }

    /// The frame of the record at `position`, checked (lengths, segments, frame check) but not authenticated, if it
    /// ends by `limit`; its ranges are in ``window``.
    private mutating func scanRecordV3(at position: Int, limit: Int) -> ScannedRecordV3? {
        guard let at = loadRecordBytes(at: position, limit: limit) else { return nil }
        return try? RecordV3Decoder.scan(window, at: at)
    }

    /// Makes the window hold the record at `position` as far as its stated length reaches, if that ends by `limit`
    /// within a record's bounds: its offset in ``window``.
    private mutating func loadRecordBytes(at position: Int, limit: Int) -> Int? {
        guard position + 8 <= limit, (try? fill(position..<(position + 8))) != nil else { return nil }
        let length = Int(window[(position - windowStart)..<(position - windowStart + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        guard length <= RecordV3.maximumBodyLength, position + 8 + length <= limit,
              (try? fill(position..<(position + 8 + length))) != nil
        else { return nil }
        return position - windowStart
    }

    /// The first record after `position`, before `limit`, whose frame reads (its SHA-256 frame check passes) with a
    /// later sequence number than `head`'s: where it starts, and the head before it — the 16 bytes before it are the
    /// chain tag of the record before.
    private mutating func nextRecordV3(after position: Int, limit: Int, after head: Head) -> (start: Int, before: Head)? {
        var candidate = max(position + 1, 16)
        // Bytes this search may read for candidates' bodies: what bounds its time on hostile bytes that declare a
        // length at every offset. Past it, the rest is one unreadable region.
        var budget = 256 << 20
        while candidate + 8 <= limit {
            defer { candidate += 1 }
            guard (try? fill(candidate..<(candidate + 8))) != nil else { return nil }
            let at = candidate - windowStart
            let length = window[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let check = window[(at + 4)..<(at + 8)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            // A length no record has cannot start one, and costs nothing: 8 bytes that straddle a record's start (the
            // byte before it, then its length's first three) pass the check 1 time in 256, with a length of gigabytes.
            guard check == length ^ 0xFFFF_FFFF, Int(length) <= RecordV3.maximumBodyLength, candidate + 8 + Int(length) <= limit else { continue }
            budget -= Int(length)
            if budget < 0 { return nil }
            guard let scanned = scanRecordV3(at: candidate, limit: limit), scanned.sequence > head.sequence else { continue }
            // The scan's ranges are in the window as it was; the fill may move it.
            let end = windowStart + scanned.end
            guard (try? fill((candidate - 16)..<end)) != nil else { continue }
            let chain = Array(window[(candidate - 16 - windowStart)..<(candidate - windowStart)])
            return (candidate, Head(epoch: head.epoch, sequence: scanned.sequence - 1, chainValue: chain))
        }
        return nil
    }
}
