#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Appending to a version 3 file: version 2's commits through the healing log (SPEC.md §26.2, §26.3), each record
// §2.5.1's — each item's group's pages as segments (§2.11), and the heads in the commit.
extension RecordLogV3 {
    /// Every holder appends: a scoped one writes its groups' pages and carries the other groups' heads as they are
    /// (§2.6). What a scoped holder cannot do is refused by the call that asks it (``KeychainError/missingEntitlement(group:operation:)``).
    func checkWritable() throws(KeychainError) {
        guard !isRecoveryView else {
            throw .invalidParameter(
                "this keychain was opened with recovery and is read-only: salvage it, or repair it (kcf repair), to write again")
        }
    }

    /// Version 3, as version 2, needs no acknowledgement in the lock file: its commit slots say what was committed.
    func acknowledgementBytes() -> [UInt8]? { nil }

    func takeUnconfirmedDurability() -> KeychainError? {
        defer { unconfirmedDurability = nil }
        return unconfirmedDurability
    }

    /// Before a write: puts the verified header back in a run that does not hold it, writes back what the open
    /// repaired, takes the last chunk's parity from records that verified, and cuts what follows the last commit —
    /// as version 2's writer does (SPEC.md §26.4, §26.5).
    func prepareForWrite() throws(KeychainError) {
        try checkTailMayBeDropped()
        let log = state.log
        if state.groups.isScoped { try checkNothingToRepair(log, writing: "appending") }
        try log.checkSlotsUnchanged()
        // One run at a time, so that a crash while writing it leaves the other.
        for (run, intact) in state.runsIntact.enumerated() where !intact {
            let written = HeaderRunV3.encode(state.headerBytes)
            let offset = run == 0 ? 0 : HeaderRunV3.runBOffset(pageCount: state.pageCount)
            try written.withBytes { (raw) throws(KeychainError) in try file.writeAll(raw, at: offset) }
            try file.sync()
            state.runsIntact[run] = true
            state.headerSeen = state.headerSeen.replacing(at: offset, with: written)
        }
        try log.poisoningOnFailure { () throws(KeychainError) in
            try log.restoreParity(ofChunksBelow: end, except: Set(state.replayed.repairs.map(\.chunk)))
        }
        for repair in state.replayed.repairs { try log.writeBack(repair) }
        state.replayed.repairs = []
        if log.appendRefusal == .tailMismatch || log.appendRefusal == .lastWriteMissing, end == log.writtenEnd {
            try log.confirmLastChunk()
        }
        if log.writtenEnd > end { try log.cut(to: end) } else { try log.cutRemnant() }
        state.replayed.tornTail = nil
    }

    /// Refuses a scoped holder's write to a file that needs parity computed again or a repair written back. The
    /// record chain covers each segment's page tag, not other groups' ciphertext and secret boxes, so a scoped
    /// holder cannot verify those bytes: parity computed from them could make damage to another group's items
    /// permanent (SPEC.md §19: parity only from verified data). A full holder repairs the file, then scoped
    /// holders write again.
    func checkNothingToRepair(_ log: HealingLog, writing operation: String) throws(KeychainError) {
        let unverified: String?
        if !state.replayed.repairs.isEmpty {
            unverified = "chunks repaired from parity are to be written back"
        } else if let refusal = log.appendRefusal, refusal == .tailMismatch || refusal == .lastWriteMissing {
            unverified = "\(refusal)"
        } else if log.parityUnsureFromChunk != nil {
            unverified = "parity is to be computed again"
        } else {
            unverified = nil
        }
        guard let unverified else { return }
        throw .io(
            operation: "\(operation) with a credential scoped to access groups (\(unverified), over other groups' records, which this "
                + "credential cannot verify: open the keychain once with a credential that reaches the whole keychain, which repairs it)",
            errno: EIO, path: path)
    }

    func append<Entries: RandomAccessCollection<LogEntry>>(
        _ entries: Entries, before: (ItemID) -> StoredItem?, using generator: inout RandomSource
    ) throws(KeychainError) -> AppendedSecrets where Entries.Index == Int {
        do throws(KeychainError) {
            try prepareForWrite()
        } catch {
            mustReload = true
            throw error
        }
        guard !entries.isEmpty else { throw .invalidParameter("a commit needs at least one entry") }
        // A group the key table lacks is added first, by a rewrite under a new root key (§2.11).
        try addGroups(namedBy: entries, using: &generator)
        let groups = state.groups
        let time = RecordLogV2.milliseconds(clock())
        defer { for case .put(_, let attributes, .inReservedBlock) in entries { attributes.encoded.storage.wipeReserved() } }
        let parts = Self.partRanges(of: entries)
        let replayedBefore = state.replayed
        var heads = try headsToCarry
        var secrets: [SealedSecret] = []
        var deletions: [(id: ItemID, time: Int64, keyID: UInt8)] = []
        // The group of each item this commit touched so far (0: deleted by it), else its group before the commit.
        var touched: [ItemID: UInt8] = [:]
        func groupBefore(_ id: ItemID) -> UInt8? {
            if let keyID = touched[id] { return keyID == 0 ? nil : keyID }
            return before(id).flatMap { groups.keyID(named: AccessGroupsV3.name(of: $0.attributes)) }
        }
        var position = end
        var chain = head.chainValue
        // Each part is sealed and appended before the next is made; only the last commits (SPEC.md §26.3).
        for (part, range) in parts.enumerated() {
            let isLast = part == parts.count - 1
            var sealed: [EntryV2] = []
            var sealedGroups: [UInt8] = []
            sealed.reserveCapacity(range.count)
            sealedGroups.reserveCapacity(range.count)
            defer { EntryV2.wipeSecrets(&sealed) }
            for index in range {
                switch entries[index] {
                case .put(let id, let attributes, let secret):
                    let keyID = try groups.keyID(of: attributes)
                    if let previous = groupBefore(id), previous != keyID {
                        // A move keeps the item id: its deletion in the old group's page comes first (§2.11).
                        sealed.append(.delete(id: id, time: time))
                        sealedGroups.append(previous)
                        deletions.append((id, time, previous))
                    }
                    sealed.append(.put(id: id, attributes: attributes, secret: secret.plaintext(attributes: attributes)))
                    sealedGroups.append(keyID)
                    touched[id] = keyID
                case .delete(let id):
                    // An item no one holds can only be deleted by a hostile test's record (``Keychain/appendUnchecked(_:)``):
                    // its deletion goes in the default group's page, and readers refuse it.
                    let keyID = groupBefore(id) ?? Self.defaultKeyID
                    sealed.append(.delete(id: id, time: time))
                    sealedGroups.append(keyID)
                    deletions.append((id, time, keyID))
                    touched[id] = 0
                case .deletion(let id, let deleted):
                    let keyID = groupBefore(id) ?? Self.defaultKeyID
                    sealed.append(.delete(id: id, time: deleted))
                    sealedGroups.append(keyID)
                    deletions.append((id, deleted, keyID))
                    touched[id] = 0
                case .tombstone(let id, let deleted, let group):
                    // In the group the item is live in (§36 refuses a tombstone of an item live in another group); for an
                    // id no one holds, the group named, else that of its last deletion here, else the default group.
                    let keyID = groupBefore(id) ?? group.flatMap { groups.keyID(named: $0) } ?? state.replayed.tombstoneGroups[id]
                        ?? Self.defaultKeyID
                    sealed.append(.tombstone(id: id, time: deleted))
                    sealedGroups.append(keyID)
                    deletions.append((id, deleted, keyID))
                }
            }
            let sequence = head.sequence + 1 + UInt64(part)
            let record: EncodedRecordV3
            do throws(KeychainError) {
                record = try RecordV3Encoder.encode(
                    kind: isLast ? .commit : .part, sequence: sequence, part: UInt32(part), previousChain: chain,
                    segments: Self.segments(sealed, groups: sealedGroups, keys: groups), heads: heads, keys: state.keys, using: &generator)
            } catch {
                if part > 0 {
                    mustReload = true
                    takeBackParts(to: replayedBefore.end)
                }
                throw error
            }
            try appendRecord(
                record.bytes, at: position, isLast: isLast, sequence: sequence, chain: record.chainTag, before: (replayedBefore.end, replayedBefore.head))
            secrets += try Self.sealedSecrets(of: record.bytes, entries: sealed)
            position += record.bytes.count
            chain = record.chainTag
            heads = record.heads
        }
        state.replayed.head = Head(epoch: epoch, sequence: head.sequence + UInt64(parts.count), chainValue: chain)
        state.replayed.end = position
        // The commit is in the file: what does not describe it makes the next call read the file again, not fail this one.
        if let moved = try? Self.chains(at: heads, following: state.replayed.groups, everyGroup: !groups.isScoped) {
            state.replayed.groups = moved
        } else {
            mustReload = true
        }
        state.replayed.heads = heads
        for deletion in deletions {
            state.replayed.tombstones[deletion.id] = deletion.time
            state.replayed.tombstoneGroups[deletion.id] = deletion.keyID
        }
        state.size = (try? file.size()) ?? state.size
        return AppendedSecrets(count: secrets.count) { secrets[$0] }
    }

    /// At most this many entries go in one part. A part's entries may alternate between groups, each change starting a
    /// segment, and a move seals two entries (§2.11), while a record holds at most 65,535 segments, the heads one of
    /// them; and each segment adds about 40 bytes (its header, its page box's nonce, tag and page header) that version
    /// 2's estimate of a part's bytes leaves out, which the 1 MiB between that estimate's limit and a record's must hold.
    static let maximumEntriesPerPart = 8_192

    /// Version 2's parts of `entries` (cut by their bytes, its pages counted as padded), each cut again to at most
    /// ``maximumEntriesPerPart`` entries.
    static func partRanges<Entries: RandomAccessCollection<LogEntry>>(of entries: Entries) -> [Range<Int>] where Entries.Index == Int {
        RecordLogV2.partRanges(of: entries, paddedPages: true).flatMap { (range) -> [Range<Int>] in
            stride(from: range.lowerBound, to: range.upperBound, by: maximumEntriesPerPart).map { $0..<min($0 + maximumEntriesPerPart, range.upperBound) }
        }
    }

    /// The segments of `entries` in order: each run of consecutive entries of one group as that group's pages, so that
    /// a reader applies them in the order given (§2.11).
    ///
    /// - Parameter groups: the key id of each entry's group, at its index.
    static func segments(_ entries: [EntryV2], groups keyIDs: [UInt8], keys: AccessGroupsV3) throws(KeychainError) -> [SegmentInputV3] {
        var segments: [SegmentInputV3] = []
        var start = 0
        while start < entries.count {
            var end = start + 1
            while end < entries.count, keyIDs[end] == keyIDs[start] { end += 1 }
            guard let group = keys.byKeyID[keyIDs[start]] else {
                throw .invalidParameter("internal error: no keys for key id \(keyIDs[start])")
            }
            segments += RecordV3Encoder.pages(Array(entries[start..<end]), keys: group)
            start = end
        }
        return segments
    }

    /// Adds the groups that the puts of `entries` name and the key table lacks (§2.11): the file rewritten into the
    /// next epoch under a new root key, its table holding them, every slot granted its keys anew (this log's own slot
    /// re-anchored on them instead, when its opening is current: ``OwnSlotV3``). The items are read
    /// again from the file — the caller's index is mid-batch — and, the group keys being kept, the caller's sealed
    /// secrets still open.
    func addGroups<Entries: RandomAccessCollection<LogEntry>>(
        namedBy entries: Entries, using generator: inout RandomSource
    ) throws(KeychainError) where Entries.Index == Int {
        // Looked through lazily: a bulk add of many items builds no array of their groups' names.
        let missing = state.groups.missing(entries.lazy.compactMap { (entry) -> String? in
            guard case .put(_, let attributes, _) = entry else { return nil }
            return AccessGroupsV3.name(of: attributes)
        })
        guard !missing.isEmpty else { return }
        guard let root = state.root, let table = state.groups.table else {
            // A scoped holder cannot tell a group it does not reach from one the file lacks: either is outside its scope.
            throw .missingEntitlement(group: missing[0], operation: "writing an item of access group \"\(missing[0])\"")
        }
        let rotated = try RotatedKeysV3(
            renewingRootOf: state.header, logKey: state.logKey, root: root, keyTable: table, adding: missing, reanchoring: ownSlot,
            using: &generator)
        var index = try Self.load(
            file: state.file, credential: credential, held: state.heldKeys, pin: head,
            memoryLimitKiB: keyDerivationMemoryLimitKiB).index
        try rewrite(
            under: FileKeys(
                fileID: fileID, logKey: rotated.logKey, root: rotated.root, groups: try AccessGroupsV3(table: rotated.keyTable, fileID: fileID),
                sealedKeyTable: rotated.sealedKeyTable, slots: rotated.slots, tombstoneHorizonDays: state.header.tombstoneHorizonDays,
                ownSlot: rotated.ownSlot),
            index: &index, credential: credential, using: &generator)
        removeStrayTemporaryFiles()
    }

    /// The followed groups' chains moved to `heads` (which this writer's own records left). A scoped writer's heads
    /// name groups it does not follow (`everyGroup` false), which stay as they are.
    static func chains(
        at heads: HeadsV3, following groups: [UInt8: GroupChainV3], everyGroup: Bool = true
    ) throws(KeychainError) -> [UInt8: GroupChainV3] {
        var moved = groups
        for head in heads.groups {
            guard let chain = groups[head.keyID] else {
                if !everyGroup { continue }
                throw .invalidParameter("internal error: the heads name group \(head.keyID), which this keychain does not follow")
            }
            moved[head.keyID] = GroupChainV3(keys: chain.keys, at: head)
        }
        return moved
    }

    /// The sealed secrets of a record's puts, in entry order, copied from its bytes (which verified as written): the
    /// group segments' secret boxes lie back to back in entry order, each `s + 28` bytes for a secret of `s`.
    ///
    /// - Parameter entries: the entries the record was encoded from, in order.
    static func sealedSecrets(of record: [UInt8], entries: [EntryV2]) throws(KeychainError) -> [SealedSecret] {
        let segments = try RecordV3Decoder.scan(record).groupSegments.map(\.secrets)
        var secrets: [SealedSecret] = []
        var segment = 0
        var offset = segments.first?.lowerBound ?? 0
        for entry in entries {
            let length: Int
            switch entry {
            case .put(_, _, let secret): length = secret.count + 28
            case .copy(_, _, let box): length = box.count
            case .delete, .tombstone: continue
            }
            // A page's boxes end with its segment; the next put's box opens the next segment that holds any.
            while segment < segments.count, offset == segments[segment].upperBound {
                segment += 1
                offset = segment < segments.count ? segments[segment].lowerBound : offset
            }
            guard segment < segments.count, offset + length <= segments[segment].upperBound else {
                throw .invalidParameter("internal error: a record written holds fewer secret bytes than its puts")
            }
            secrets.append(RecordLogV2.sealedSecret(box: Array(record[offset..<(offset + length)]), entryBytes: entry.pageByteCount))
            offset += length
        }
        return secrets
    }
}
