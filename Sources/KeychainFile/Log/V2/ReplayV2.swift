#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Replays a version 2 log into an index (Docs/FormatVersion2.md §3 and §5): every record up to the newest
/// commit verified — pages opened, secret boxes' tags checked — and applied a transaction at a time.
///
/// Records are read as they stand in the file. Where one does not verify, the log's parity is asked for repaired
/// bytes of the chunks it may lie in (``HealingLog/repair(chunk:)``), and the record is read again through them:
/// the repair is kept only if the record then verifies, and the next writer writes it back. A record that still
/// does not verify is, by where it lies:
/// - below the older commit or the rewrite end: acknowledged, so damage — `corrupted`, never cut (§3 rule 1);
/// - in the newest commit: possibly acknowledged — replay stops before it, and no write may cut it (rule 2);
/// - past the newest commit: the parts of a transaction that never committed, which the next writer cuts (rule 3).
struct ReplayV2 {
    /// Where a replay stopped, and what it found on the way.
    struct Outcome {
        /// The last record applied, and where it ends (a commit's end, in the log's logical bytes).
        var head: Head
        var end: Int
        /// What lies after `end` and was not applied.
        var tornTail: TornTail?
        /// Deleted items and when they were deleted, in milliseconds since 1970 (kept by rewrites, for merging).
        var tombstones: [ItemID: Int64]
        /// Chunks whose repaired bytes verified, for the next writer to write back.
        var repairs: [HealingLog.ChunkRepair]
        /// Version 3: the chains of the groups the reader follows, as the last commit applied left them.
        var groups: [UInt8: GroupChainV3] = [:]
        /// Version 3: the key id of the group whose page holds each tombstone (a rewrite writes it back there).
        var tombstoneGroups: [ItemID: UInt8] = [:]
        /// Version 3, a scoped holder: how far the groups it does not follow have come (``OpaqueChainV3``).
        var others: [UInt8: OpaqueChainV3] = [:]
        /// Version 3: the heads of the last commit applied, every group's (`nil` before the first): what a writer's
        /// next commit starts from, carrying the heads of groups it does not follow as they are.
        var heads: HeadsV3? = nil
        /// Version 3, a scoped holder's replay for a scoped rewrite (``collectsOpaqueSegments``): the segments of the
        /// groups it does not follow, in log order, of the commits applied.
        var opaqueSegments: [OpaqueSegmentV3] = []
    }

    let log: HealingLog
    let keys: ReplayKeys
    var index: ItemIndex
    var outcome: Outcome
    /// Whether the outcome keeps the bytes of other groups' segments (``Outcome/opaqueSegments``), which a scoped
    /// rewrite copies; a replay that only reads counts them.
    var collectsOpaqueSegments = false
    /// The head the header says the last rewrite's records end with.
    let rewriteHead: Head?
    /// Where a replay of an earlier state stops (SPEC.md §43.9): it applies the commits that end by this log offset
    /// and stops before the first record that does not, taking back a transaction it did not finish; `nil` for a
    /// replay to the log's committed end.
    var stopsBy: Int? = nil
    /// What a recovering replay applied since its head was last confirmed, to take back at a forked end.
    var recoveryUndo = RecoveryUndo()
    let watchedSequence: UInt64?
    /// The chain value of the pinned record, once the replay has passed it.
    var watchedChain: [UInt8]?
    /// The heads at the commit slots' committed ends, for the fork check.
    private var headsAtSlots: [Int: Head] = [:]
    /// Log bytes read, from `windowStart`, with repaired chunks laid over them.
    private(set) var window: [UInt8] = []
    private(set) var windowStart = 0
    /// What a recovering replay (``recover()``) could not read.
    var damage: [Damage] = []
    /// File bytes the replay could not read (EIO on every try), each read's from its first such byte to its last:
    /// read as zeros, and as erasures by parity.
    private var unreadable: [Range<Int>] = []
    /// Proposed repairs, by chunk, not yet confirmed by a record that verifies.
    private var proposals: [Int: HealingLog.ChunkRepair] = [:]
    /// Chunks parity was asked for: their bytes do not change during a replay, so none is asked twice.
    private var askedChunks: Set<Int> = []

    /// A replay from the log's start, whose first record follows `start` (sequence 0 and C0).
    ///
    /// - Parameter groups: version 3: the chains of the groups the reader follows, before their first page.
    init(
        log: HealingLog, keys: ReplayKeys, start: Head, groups: [UInt8: GroupChainV3] = [:], rewriteHead: Head? = nil,
        watching pin: Head? = nil
    ) {
        self.init(
            log: log, keys: keys,
            continuing: Outcome(head: start, end: 0, tornTail: nil, tombstones: [:], repairs: [], groups: groups),
            index: ItemIndex(), rewriteHead: rewriteHead, watching: pin)
    }

    /// A replay that goes on after `outcome`, whose records `index` holds.
    init(log: HealingLog, keys: ReplayKeys, continuing outcome: Outcome, index: ItemIndex, rewriteHead: Head? = nil, watching pin: Head? = nil) {
        self.log = log
        self.keys = keys
        self.index = index
        self.outcome = outcome
        self.outcome.tornTail = nil
        self.rewriteHead = rewriteHead
        watchedSequence = pin.flatMap { $0.epoch == outcome.head.epoch ? $0.sequence : nil }
        if watchedSequence == outcome.head.sequence { watchedChain = outcome.head.chainValue }
    }

    mutating func run() throws(KeychainError) {
        let committedEnd = log.committedEnd
        // A newest commit that wrote no records (a cut, or parity committed again) acknowledged everything below its
        // end; otherwise the commit before it did.
        let acknowledgedEnd = log.lastWrite.isEmpty ? committedEnd : max(log.rewriteEnd, Int(log.older?.seal.committedEnd ?? 0))
        let slotEnds = Set([log.newest, log.older].compactMap { $0.map { Int($0.seal.committedEnd) } })
        var position = outcome.end
        var head = outcome.head
        // Version 3's group chains move with each record; the outcome keeps the last commit's.
        var groups = outcome.groups
        var others = outcome.others
        // A transaction's records go into the index as each verifies, all or nothing: what its parts put in is
        // taken out again if it does not commit (``ItemIndex/applyPiece(_:digests:ofRecordOf:to:)``), so that
        // a transaction of any size is never held whole beside the index.
        var application = ItemIndex.PiecewiseApplication()
        var deletions: [(ItemID, Int64)] = []
        var deletionGroups: [UInt8] = []
        var opaqueSegments: [OpaqueSegmentV3] = []
        // Version 3: the group of each item the transaction touched so far (0: deleted by it), and each group's key id by name.
        var touched: [ItemID: UInt8] = [:]
        let keyIDs: [String: UInt8]
        if case .version3(_, let names, _) = keys { keyIDs = Dictionary(names.map { ($1, $0) }, uniquingKeysWith: { first, _ in first }) } else { keyIDs = [:] }
        var nextPart: UInt32? = nil
        var transactionStart = position
        OpeningProgressReporting.verified(position, of: committedEnd)
        do throws(KeychainError) {
            while position < committedEnd {
                if let stopsBy, try !recordEnds(at: position, by: stopsBy) { break }
                let record: ReplayedRecordV2
                do {
                    record = try readRecordForReplay(at: position, after: head, limit: committedEnd, groups: &groups, others: &others)
                } catch {
                    // Read and repaired once more, if parity proposes anything new for where the record may lie.
                    if case .corrupted = error, try proposeRepairs(from: position),
                       let repaired = try? readRecordForReplay(at: position, after: head, limit: committedEnd, groups: &groups, others: &others) {
                        record = repaired
                    } else {
                        index.abandonApplying(&application)
                        try stop(
                            at: nextPart == nil ? position : transactionStart, failedRecord: position, acknowledgedEnd: acknowledgedEnd,
                            error: error)
                        return
                    }
                }
                if let violation = record.violation { throw .corrupted(offset: position, reason: violation) }
                if !record.placements.isEmpty { try checkGroups(of: record, keyIDs: keyIDs, touched: &touched, at: position) }
                guard record.part == (nextPart ?? 0) else {
                    throw .corrupted(
                        offset: position, reason: "record \(record.sequence) is part \(record.part) where part \(nextPart ?? 0) was due")
                }
                if nextPart == nil { transactionStart = position }
                index.applyPiece(record.entries, digests: record.digests, ofRecordOf: record.entries.count, to: &application)
                deletions += record.deletionTimes
                if collectsOpaqueSegments { opaqueSegments += record.opaque }
                // Version 3: the key id of each deletion's and tombstone's page, in the order of `deletionTimes`.
                deletionGroups += record.placements.lazy.filter { $0.kind != .put }.map(\.keyID)
                head = Head(epoch: head.epoch, sequence: record.sequence, chainValue: record.chain)
                position = windowStart + record.end
                OpeningProgressReporting.verified(position, of: committedEnd)
                if head.sequence == watchedSequence { watchedChain = head.chainValue }
                if slotEnds.contains(position) { headsAtSlots[position] = head }
                switch record.kind {
                case .part:
                    nextPart = record.part + 1
                    // A part that ends by the rewrite end is acknowledged (the header names the head its transaction
                    // ends at): applied now, so that a rewrite written as one transaction (version 3, §2.5) is never
                    // held whole beside the index, whatever updates and deletions the copied history holds.
                    if position <= log.rewriteEnd { try finishApplying(&application, transactionStart: transactionStart) }
                case .commit:
                    try finishApplying(&application, transactionStart: transactionStart)
                    for (id, time) in deletions { outcome.tombstones[id] = time }
                    for (position, keyID) in deletionGroups.enumerated() where position < deletions.count {
                        outcome.tombstoneGroups[deletions[position].0] = keyID
                    }
                    deletions.removeAll(keepingCapacity: true)
                    deletionGroups.removeAll(keepingCapacity: true)
                    outcome.opaqueSegments += opaqueSegments
                    opaqueSegments.removeAll()
                    touched.removeAll(keepingCapacity: true)
                    nextPart = nil
                    outcome.groups = groups
                    outcome.others = others
                    if let heads = record.heads { outcome.heads = heads }
                    outcome.head = head
                    outcome.end = position
                    if position == log.rewriteEnd, let rewriteHead, rewriteHead != head {
                        throw .corrupted(offset: position, reason: "the records the last rewrite wrote end with another head than its header names")
                    }
                }
            }
            if stopsBy != nil {
                // An earlier state is the last commit's: what a transaction it stopped inside applied is taken back.
                index.abandonApplying(&application)
                return
            }
            guard nextPart == nil else {
                throw .corrupted(
                    offset: transactionStart, reason: "the log's committed end (byte \(committedEnd)) falls inside a transaction: its frames are damaged")
            }
        } catch {
            // The index is left as the last commit made it.
            index.abandonApplying(&application)
            throw error
        }
        confirmRepairs()
        let physicalEnd = HealingLayout.physicalEnd(ofLog: log.writtenEnd)
        if log.appendRefusal == .noCommitSlot {
            // No commit slot reads, yet the log holds bytes past the rewrite: they may have been acknowledged.
            outcome.tornTail = TornTail(
                offset: committedEnd, byteCount: max(0, ((try? log.file.size()) ?? physicalEnd) - HealingLayout.physicalEnd(ofLog: committedEnd)),
                reason: "no commit slot reads, and the log holds bytes after the last rewrite's records", mayHoldAcknowledgedData: true)
        } else if let size = try? log.file.size(), size > physicalEnd, log.writtenEnd == committedEnd {
            outcome.tornTail = TornTail(
                offset: committedEnd, byteCount: size - physicalEnd,
                reason: "bytes past the log's written end: a write that never committed (a crash remnant)")
        } else if log.writtenEnd > committedEnd {
            outcome.tornTail = TornTail(
                offset: committedEnd, byteCount: log.writtenEnd - committedEnd,
                reason: "records of a transaction that never committed (a crash during a large batch)")
        }
    }

    /// Ends the replay at `offset`, the start of a record or transaction that does not verify even repaired; the
    /// record at `failedRecord` is the one that did not.
    ///
    /// When bytes of that record could not be read (EIO on every try) the replay cannot tell damage from a read
    /// that fails for now: that is an I/O error naming them, never the end of the acknowledged records nor records
    /// set aside, so that the same file opens whole once they read again.
    private mutating func stop(at offset: Int, failedRecord: Int, acknowledgedEnd: Int, error: KeychainError) throws(KeychainError) {
        confirmRepairs()
        if let lost = unreadableBytes(ofRecordAt: failedRecord) {
            throw .io(
                operation: "reading file bytes \(lost.lowerBound)–\(lost.upperBound - 1) (they could not be read, after \(HealingLog.readAttempts) "
                    + "tries, and parity could not rebuild the record at log offset \(failedRecord) without them; open the keychain with "
                    + "recovery, or salvage it, to read every other item)",
                errno: EIO, path: log.file.path)
        }
        guard offset >= acknowledgedEnd else {
            if case .corrupted(let at, let reason) = error {
                throw .corrupted(offset: at, reason: "\(reason); the record is acknowledged and parity could not repair it")
            }
            throw error
        }
        outcome.tornTail = TornTail(
            offset: offset, byteCount: log.writtenEnd - offset,
            reason: "the newest commit's records do not verify, even repaired (\(error))", mayHoldAcknowledgedData: true)
    }

    /// Checks the commit slots' heads against the records' (``HealingLog/checkHeads(_:)``).
    func checkHeads() throws(KeychainError) {
        try log.checkHeads { headsAtSlots[$0] }
    }

    /// Reads and verifies the record at `position`, which must follow `head` and end by `limit`.
    mutating func readRecord(at position: Int, after head: Head, limit: Int) throws(KeychainError) -> RecordV2Decoder.Record {
        guard case .version2(let keys) = keys else {
            throw .unsupportedFeature(offset: position, reason: "reading a version 3 record outside a replay is not built yet")
        }
        try loadRecord(at: position, limit: limit)
        let record = try inLog { () throws(KeychainError) in
            try RecordV2Decoder.decode(window, at: position - windowStart, previousChain: head.chainValue, keys: keys)
        }
        try checkSequence(record.sequence, at: position, after: head)
        return record
    }

    /// ``readRecord(at:after:limit:)`` with the record's entries made as the index applies them, its pages opened on
    /// several threads (``RecordV2PagesDecoder``): the same record, or the same error.
    ///
    /// Puts what the transaction's pieces applied into the index for good. The transaction authenticated, so one the
    /// index cannot take (an item put twice, say) is `corrupted` at `transactionStart`, never set aside.
    private mutating func finishApplying(_ application: inout ItemIndex.PiecewiseApplication, transactionStart: Int) throws(KeychainError) {
        do {
            try index.finishApplying(&application)
        } catch {
            throw .corrupted(offset: transactionStart, reason: "an authentic transaction cannot be applied: \(error)")
        }
    }

    /// - Parameter groups: version 3: the group chains before the record, moved past it when it verifies.
    mutating func readRecordForReplay(
        at position: Int, after head: Head, limit: Int, groups: inout [UInt8: GroupChainV3], others: inout [UInt8: OpaqueChainV3],
        otherHeads: OtherHeadsCheckV3 = .refuse
    ) throws(KeychainError) -> ReplayedRecordV2 {
        try loadRecord(at: position, limit: limit)
        let record: ReplayedRecordV2
        var moved = groups
        var movedOthers = others
        switch keys {
        case .version2(let keys):
            record = try inLog { () throws(KeychainError) in
                try RecordV2PagesDecoder.decode(window, at: position - windowStart, previousChain: head.chainValue, keys: keys)
            }
        case .version3(let keys, let names, let followsEveryGroup):
            record = try inLog { () throws(KeychainError) in
                try RecordV3ReplayDecoder.decode(
                    window, at: position - windowStart, previousChain: head.chainValue, keys: keys, groupNames: names,
                    followsEveryGroup: followsEveryGroup, groups: &moved, others: &movedOthers, otherHeads: otherHeads)
            }
        }
        try checkSequence(record.sequence, at: position, after: head)
        // The chains move only past a record that is the next one.
        groups = moved
        others = movedOthers
        return record
    }

    /// Whether the record at `position` ends by `limit`, as its frame's length says (``stopsBy``).
    private mutating func recordEnds(at position: Int, by limit: Int) throws(KeychainError) -> Bool {
        guard position + 8 <= limit else { return false }
        try fill(position..<(position + 8))
        let at = position - windowStart
        let length = Int(window[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        return position + 8 + length <= limit
    }

    /// Makes the window hold the whole record at `position`, whose frame must end by `limit`.
    private mutating func loadRecord(at position: Int, limit: Int) throws(KeychainError) {
        try fill(position..<min(limit, position + 8))
        guard position + 8 <= limit else {
            throw .corrupted(offset: position, reason: "\(limit - position) bytes before the committed end, too few for a record")
        }
        let at = position - windowStart
        let length = Int(window[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        guard length <= RecordV2.maximumBodyLength, position + 8 + length <= limit else {
            throw .corrupted(offset: position, reason: "a record of \(length) bytes would run past the committed end (byte \(limit))")
        }
        try fill(position..<(position + 8 + length))
    }

    /// Runs a decoder on the window, its reports moved from offsets in the window to offsets in the log, wherever
    /// the window began.
    private func inLog<Value>(_ decode: () throws(KeychainError) -> Value) throws(KeychainError) -> Value {
        do {
            return try decode()
        } catch .corrupted(let offset, let reason) {
            throw .corrupted(offset: windowStart + offset, reason: reason)
        } catch .unsupportedFeature(let offset, let reason) {
            throw .unsupportedFeature(offset: windowStart + offset, reason: reason)
        }
    }

    private func checkSequence(_ sequence: UInt64, at position: Int, after head: Head) throws(KeychainError) {
        // A head at 2^64 − 1 has no next record (a recovering read may take a sequence number from a frame it could not
        // authenticate).
        guard head.sequence < UInt64.max, sequence == head.sequence + 1 else {
            throw .corrupted(offset: position, reason: "record \(sequence) where record \(head.sequence &+ 1) was due")
        }
    }

    /// The file bytes of the record at `offset` — as far as its frame says it reaches, or to the end of its chunk
    /// when the window does not hold the frame — that this replay could not read, as one range from the first to
    /// the last; `nil` if it read them all.
    private func unreadableBytes(ofRecordAt offset: Int) -> Range<Int>? {
        var end = min(log.writtenEnd, (offset / ChunkParity.dataLength + 1) * ChunkParity.dataLength)
        let at = offset - windowStart
        if at >= 0, at + 4 <= window.count {
            let length = Int(window[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            if length <= RecordV2.maximumBodyLength { end = min(log.writtenEnd, offset + 8 + length) }
        }
        let span = HealingLayout.physical(offset)..<HealingLayout.physicalEnd(ofLog: max(end, offset + 1))
        let lost = unreadable.filter { $0.overlaps(span) }
        guard let first = lost.map(\.lowerBound).min(), let last = lost.map(\.upperBound).max() else { return nil }
        return first..<last
    }

    /// Makes the window hold `range` of the log.
    mutating func fill(_ range: Range<Int>) throws(KeychainError) {
        if range.lowerBound >= windowStart && range.upperBound <= windowStart + window.count { return }
        let count = min(log.writtenEnd - range.lowerBound, max(range.count, Self.windowSize))
        window = try readLog(at: range.lowerBound, count: count)
        windowStart = range.lowerBound
    }

    /// Log bytes as they read, unreadable sectors as zeros, with proposed repairs laid over them. Bytes past the
    /// file's end (the last write claims them, the file does not hold them: §3 rule 4) read as zeros, and the
    /// bytes before the end are read as they are, also in the sector the end falls in.
    private mutating func readLog(at offset: Int, count: Int) throws(KeychainError) -> [UInt8] {
        let size = try log.file.size()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        var position = offset
        while position < offset + count {
            let chunk = position / ChunkParity.dataLength
            let inChunk = position % ChunkParity.dataLength
            let length = min(offset + count - position, ChunkParity.dataLength - inChunk)
            if let repair = proposals[chunk], inChunk + length <= repair.data.count {
                bytes += repair.data[inChunk..<(inChunk + length)]
            } else {
                let physical = HealingLayout.physical(position)
                let held = max(0, min(length, size - physical))
                if held > 0 {
                    let read = HealingLog.readTolerating(log.file, count: held, at: physical)
                    bytes += read.bytes
                    if let first = read.unreadable.min(), let last = read.unreadable.max() {
                        unreadable.append((physical + first)..<(physical + last + 1))
                    }
                }
                bytes += [UInt8](repeating: 0, count: length - held)
            }
            position += length
        }
        return bytes
    }

    /// Asks parity for the chunks a record at `position` may lie in; whether any proposal changes bytes.
    mutating func proposeRepairs(from position: Int) throws(KeychainError) -> Bool {
        let last = (min(log.writtenEnd, position + 8 + RecordV2.maximumBodyLength) - 1) / ChunkParity.dataLength
        var changed = false
        for chunk in (position / ChunkParity.dataLength)...max(last, position / ChunkParity.dataLength)
        where proposals[chunk] == nil && !askedChunks.contains(chunk) {
            askedChunks.insert(chunk)
            let repair = try log.repair(chunk: chunk)
            if !repair.changedOffsets.isEmpty || repair.parityChanged {
                proposals[chunk] = repair
                changed = changed || !repair.changedOffsets.isEmpty
            }
        }
        if changed { window = [] }
        return changed
    }

    /// Keeps the proposals whose changed bytes all lie in records that verified; of the others, the changed bytes
    /// that lie in such records, alone (no parity, nothing past the replay's end), so that a writer puts back
    /// what those records verified as before it computes a chunk's parity from the bytes below the end.
    private mutating func confirmRepairs() {
        for (chunk, repair) in proposals.sorted(by: { $0.key < $1.key }) {
            let start = chunk * ChunkParity.dataLength
            if repair.changedOffsets.allSatisfy({ start + $0 < outcome.end }) && repair.unrepairedCodewords.isEmpty {
                outcome.repairs.append(repair)
                continue
            }
            let confirmed = repair.changedOffsets.filter { start + $0 < outcome.end }
            guard !confirmed.isEmpty else { continue }
            outcome.repairs.append(
                HealingLog.ChunkRepair(
                    chunk: chunk, data: Array(repair.data.prefix(outcome.end - start)), changedOffsets: confirmed,
                    parity: repair.parity, parityChanged: false, unrepairedCodewords: repair.unrepairedCodewords))
        }
        proposals = [:]
    }

    /// Bytes read at a time.
    static let windowSize = 1 << 20
}
