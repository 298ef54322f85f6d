#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(KeychainFileInternals) import KeychainCrypto

// Writing a whole version 3 file (Docs/FormatVersion3.md §2.10): a new keychain, compaction and credential changes.
extension RecordLogV3 {
    /// What a whole file is written under: the keys and the parts of the header a rewrite keeps.
    struct FileKeys {
        let fileID: [UInt8]
        let logKey: SymmetricKey
        /// The root key, which the log keeps to open a file another process compacts; `nil` for a scoped holder.
        let root: SymmetricKey?
        /// Every group's key id, name and keys (they name the file id, not the epoch).
        let groups: AccessGroupsV3
        /// The key table as sealed under the root key: it names no epoch, so a rewrite keeps its bytes.
        let sealedKeyTable: [UInt8]
        var slots: [KeySlotV3]
        let tombstoneHorizonDays: UInt32
        /// The writer's own slot in `slots` with its opening, when the change re-anchored it (``OwnSlotV3``).
        var ownSlot: OwnSlotV3? = nil
    }

    /// Creates a new version 3 keychain file holding no items, with one full slot for `credential`: written under a
    /// temporary name, made durable, then linked into place so that an existing file is never replaced.
    static func create<Generator: RandomNumberGenerator>(
        at path: String, credential: Credential, keyDerivation: PasswordKeyDerivation, fileSystem: any FileSystem,
        clock: @escaping @Sendable () -> Date, using generator: inout Generator
    ) throws(KeychainError) -> (RecordLogV3, ItemIndex) {
        guard !fileSystem.exists(path) else { throw .invalidParameter("a file already exists at \(path)") }
        try credential.validate()
        let new = try NewHeaderV3(credential: credential, kdf: RecordLogV2.slotKDF(for: credential, keyDerivation), using: &generator)
        let keys = FileKeys(
            fileID: new.header.fileID, logKey: new.logKey, root: new.root,
            groups: try AccessGroupsV3(table: new.keyTable, fileID: new.header.fileID), sealedKeyTable: new.header.sealedKeyTable,
            slots: new.header.slots, tombstoneHorizonDays: new.header.tombstoneHorizonDays)
        let state = try writeFile(
            at: path, replacing: false, keys: keys, epoch: 1, itemCount: 0, item: { _ in preconditionFailure("a new keychain has no items") },
            decryptSecret: { _ throws(KeychainError) in [] }, tombstones: [:], tombstoneGroups: [:], fileSystem: fileSystem, using: &generator).state
        let log = RecordLogV3(path: path, fileSystem: fileSystem, credential: credential, clock: clock, state: state)
        log.ownSlot = new.ownSlot
        return (log, ItemIndex())
    }

    /// Replaces the file with one in the next epoch holding the index's live items in the order they were added and
    /// the tombstones younger than the header's horizon, every secret sealed anew, with the keys and slots `change`
    /// makes (``fileKeys(after:using:)``): compaction, and every credential change. Returns the slot added, if any.
    @discardableResult
    func rewrite(
        changing change: SlotChange, index: inout ItemIndex, using generator: inout RandomSource
    ) throws(KeychainError) -> KeySlotInfo? {
        try checkTailMayBeDropped()
        guard epoch < UInt64.max else { throw .limitReached("the epoch counter is exhausted") }
        let (keys, added) = try fileKeys(after: change, using: &generator)
        try rewrite(under: keys, index: &index, credential: change.credential(after: credential), using: &generator)
        return added
    }

    /// Replaces the file with one in the next epoch under `keys`, holding the index's live items in the order they
    /// were added (each group's in its own pages) and the tombstones younger than the header's horizon, every secret
    /// sealed anew; the log opens it with `newCredential` from then on.
    ///
    /// A scoped holder's rewrite (§2.6) first copies every segment of the groups it does not hold, byte for byte and in
    /// log order, dead ones included (it cannot tell them apart), and keeps the epoch each of their chains began in;
    /// it refuses, as its appends do, a file that needs a repair it cannot verify.
    ///
    /// The writer's own slot, when the change leaves it as this log opened it and it holds grants, is re-anchored on
    /// the keys they gave (``OwnSlotV3``): every rewrite a holder makes empties its slot of the grants others' rotations
    /// and added groups left there (Docs/FormatVersion3.md §2.2).
    func rewrite(
        under fileKeys: FileKeys, index: inout ItemIndex, credential newCredential: Credential, using generator: inout RandomSource
    ) throws(KeychainError) {
        try checkTailMayBeDropped()
        guard epoch < UInt64.max else { throw .limitReached("the epoch counter is exhausted") }
        var keys = fileKeys
        if keys.ownSlot == nil, let own = ownSlot, let place = keys.slots.firstIndex(where: { $0.slotID == own.slot.slotID }),
           let reanchored = try own.reanchoring(keys.slots[place], logKey: keys.logKey, root: keys.root, fileID: fileID, using: &generator) {
            keys.slots[place] = reanchored.slot
            keys.ownSlot = reanchored
        }
        var copied: [OpaqueSegmentV3] = []
        var chainStarts: [ChainStartV3] = []
        var carried: [GroupHeadV3] = []
        if state.groups.isScoped {
            try checkNothingToRepair(state.log, writing: "rewriting")
            try checkCompleteChunksMatchParity()
            copied = try opaqueSegmentsToCopy()
            for keyID in Set(copied.map(\.keyID)).sorted() {
                guard let head = state.replayed.heads?[keyID] else {
                    throw .corrupted(offset: end, reason: "the last commit's heads name no head for group \(keyID), which has segments in the file")
                }
                chainStarts.append(ChainStartV3(keyID: keyID, startEpoch: head.startEpoch))
            }
            // The other groups without a segment keep their heads, and the epochs their chains began in.
            for head in state.replayed.heads?.groups ?? [] where head.groupSequence == 0 && state.groups.byKeyID[head.keyID] == nil {
                carried.append(head)
                chainStarts.append(ChainStartV3(keyID: head.keyID, startEpoch: head.startEpoch))
            }
            chainStarts.sort { $0.keyID < $1.keyID }
        }
        let header = state.header
        let horizon = RecordLogV2.milliseconds(clock()) - Int64(header.tombstoneHorizonDays) * 86_400_000
        let tombstones = state.replayed.tombstones.filter { $0.value >= horizon && index.position(of: $0.key) == nil }
        let order = index.positionsInAddedOrder()
        var placed: [SealedSecret]? = nil
        defer {
            if let placed {
                for (rank, secret) in placed.enumerated() { index.replaceSecret(atPosition: Int(order[rank]), with: secret) }
            }
        }
        _ = try Self.writeFile(
            at: path, replacing: true, keys: keys, epoch: epoch + 1, itemCount: order.count,
            item: { index.item(atPosition: Int(order[$0])) },
            decryptSecret: { (item) throws(KeychainError) in try self.decryptSecret(of: item) }, tombstones: tombstones,
            tombstoneGroups: state.replayed.tombstoneGroups, copied: copied, chainStarts: chainStarts, carriedHeads: carried, fileSystem: fileSystem,
            using: &generator, afterRename: { (written) in
                self.adopt(written.state)
                self.credential = newCredential
                if let reanchored = keys.ownSlot { self.ownSlot = reanchored }
                placed = written.secrets
            })
    }

    /// The most bytes of copied segments one record of a scoped rewrite holds (a segment larger goes alone): records of
    /// a few MiB keep what a reader holds at once small, as version 2's parts do.
    static let copiedBytesPerRecord = 4 << 20
    /// The most copied segments one record holds, well inside a record's 65,535 segments.
    static let copiedSegmentsPerRecord = 16_384

    /// Refuses a scoped rewrite of a file whose complete log chunks do not all match their parity. The rewrite copies
    /// other groups' bytes, which the scoped holder cannot verify (the chain covers their page tags, not their
    /// ciphertext), into a new file with new parity: damage there would be copied, and the old parity that could repair
    /// it would go with the old file. An append leaves those chunks and their parity as they are, so only a rewrite
    /// asks this of them.
    ///
    /// - Throws: `.io` (EIO) naming the first chunk that does not match, and the remedy.
    func checkCompleteChunksMatchParity() throws(KeychainError) {
        let log = state.log
        for chunk in 0..<(end / ChunkParity.dataLength) {
            let data = try log.read(at: chunk * ChunkParity.dataLength, count: ChunkParity.dataLength)
            guard log.compareParity(ofChunk: chunk, verifiedData: data).differing.isEmpty else {
                throw .io(
                    operation: "rewriting with a credential scoped to access groups (log chunk \(chunk) does not match its parity, and "
                        + "this credential cannot tell whether other groups' records or the parity are damaged: compact the keychain "
                        + "once with a credential that reaches the whole keychain, which repairs or rewrites it)",
                    errno: EIO, path: path)
            }
        }
    }

    /// The segments of the groups a scoped holder does not follow, in log order, as the records up to its head hold
    /// them: what a scoped rewrite copies (§2.6). The log is replayed again from its start, keeping their bytes (a
    /// replay that only reads counts them), and must end where this log's state does.
    ///
    /// - Throws: what a replay throws; `.corrupted` when the records no longer end at this log's head.
    func opaqueSegmentsToCopy() throws(KeychainError) -> [OpaqueSegmentV3] {
        let header = state.header
        let log = try HealingLog(opening: state.logFile, headerKey: state.logKeys.header, epoch: epoch, rewriteEnd: Int(header.rewriteEnd))
        var replay = ReplayV2(
            log: log, keys: .version3(state.keys, groupNames: state.groups.names, followsEveryGroup: false),
            start: Head(epoch: epoch, sequence: 0, chainValue: header.initialChainValue(headerKey: state.logKeys.header)),
            groups: Self.initialChains(of: state.groups, keys: state.keys),
            rewriteHead: Head(epoch: epoch, sequence: header.rewriteHeadSequence, chainValue: header.rewriteHeadChain))
        replay.collectsOpaqueSegments = true
        try replay.run()
        guard replay.outcome.head == state.replayed.head, replay.outcome.end == end else {
            throw .corrupted(
                offset: replay.outcome.end,
                reason: "the records read again end at sequence \(replay.outcome.head.sequence), not \(head.sequence) as when the keychain was opened: open it again")
        }
        return replay.outcome.opaqueSegments
    }

    /// Writes a whole version 3 file — the items as commit records through a healing log, then the two header
    /// runs naming the records' end and head — under a temporary name, makes it durable and puts it at `path`
    /// (``StagedFile``). `afterRename` runs once it is in place. Each item is in its group's pages, each tombstone in
    /// the group `tombstoneGroups` names (§2.11), every such group's chain starting at `epoch`.
    ///
    /// A scoped rewrite (§2.6) passes the other groups' segments as `copied`, in log order: they are written first,
    /// byte for byte, and the commit's heads name each copied group at its last segment; `chainStarts` (in the header)
    /// says in which epoch each copied group's chain began; `carriedHeads` are the heads of the other groups without a
    /// segment (group sequence 0), which the commit names as they are.
    ///
    /// The file's records are one transaction (§2.5): parts, then one commit of heads alone naming every group the
    /// writer knows — a group of its own without a page at group sequence 0 with its start value — so that no commit
    /// names at sequence 0 a group that has pages, and the file holds a commit even with nothing else to write.
    static func writeFile<Generator: RandomNumberGenerator>(
        at path: String, replacing: Bool, keys fileKeys: FileKeys, epoch: UInt64, itemCount: Int, item: (Int) -> StoredItem,
        decryptSecret: (StoredItem) throws(KeychainError) -> [UInt8], tombstones: [ItemID: Int64], tombstoneGroups: [ItemID: UInt8],
        copied: [OpaqueSegmentV3] = [], chainStarts: [ChainStartV3] = [], carriedHeads: [GroupHeadV3] = [], fileSystem: any FileSystem,
        using generator: inout Generator, afterRename: ((state: FileState, secrets: [SealedSecret])) -> Void = { _ in }
    ) throws(KeychainError) -> (state: FileState, secrets: [SealedSecret]) {
        let fileID = fileKeys.fileID
        let epochSalt = randomBytes(32, using: &generator)
        let logKeys = try LogKeysV3(logKey: fileKeys.logKey, fileID: fileID, epoch: epoch, epochSalt: epochSalt)
        let draft = FileHeaderV3(
            fileID: fileID, epoch: epoch, epochSalt: epochSalt, rewriteEnd: 0, rewriteHeadSequence: 0,
            rewriteHeadChain: [UInt8](repeating: 0, count: 16), tombstoneHorizonDays: fileKeys.tombstoneHorizonDays,
            sealedKeyTable: fileKeys.sealedKeyTable, slots: fileKeys.slots, chainStarts: chainStarts)
        guard draft.length <= FileHeaderV3.maximumLength else {
            throw .limitReached(
                "the key slots and key table take \(draft.length) bytes, more than sixteen header pages (\(FileHeaderV3.maximumLength)): remove a credential")
        }
        let pageCount = HeaderRunV3.pageCount(forLength: draft.length)
        let initialChain = draft.initialChainValue(headerKey: logKeys.header)
        let keys = try RecordKeysV3(fileID: fileID, epoch: epoch, chainKey: logKeys.chain, headsKey: logKeys.heads, chainStarts: chainStarts)
        let groups = fileKeys.groups
        func keyID(of entry: EntryV2) throws(KeychainError) -> UInt8 {
            switch entry {
            case .put(_, let attributes, _), .copy(_, let attributes, _): return try groups.keyID(of: attributes)
            case .delete(let id, _), .tombstone(let id, _):
                guard let keyID = tombstoneGroups[id] else {
                    throw .invalidParameter("internal error: the tombstone of item \(HexText.lowercase(id.bytes)) names no group")
                }
                return keyID
            }
        }
        var loaded: (state: FileState, secrets: [SealedSecret])? = nil
        _ = try StagedFile.write(
            at: path, temporary: StagedFile.temporaryName(for: path, using: &generator), replacing: replacing, fileSystem: fileSystem,
            body: { (staging) throws(KeychainError) -> (header: FileHeaderV3, bytes: [UInt8], log: HealingLog, head: Head, heads: HeadsV3, others: [UInt8: OpaqueChainV3], secrets: [SealedSecret]) in
                // The prefix is zeros — two empty commit slots — until the header runs are written last.
                try staging.truncate(to: HeaderRunV3.logStart(pageCount: pageCount))
                let log = HealingLog(
                    creating: HeaderRunShiftedFileHandle.logFile(staging, pageCount: pageCount), headerKey: logKeys.header, epoch: epoch)
                var head = Head(epoch: epoch, sequence: 0, chainValue: initialChain)
                var heads = HeadsV3()
                for group in groups.byKeyID.values {
                    let chain = GroupChainV3(keys: group, startEpoch: keys.startEpoch(of: group.keyID))
                    heads = heads.setting(GroupHeadV3(keyID: group.keyID, startEpoch: chain.startEpoch, groupSequence: 0, lastTag: chain.lastTag))
                }
                for carried in carriedHeads { heads = heads.setting(carried) }
                var secrets: [SealedSecret] = []
                secrets.reserveCapacity(itemCount)
                // The whole file is one transaction (§2.5): parts — a scoped rewrite's copies first (§2.6), in log
                // order, then the items and tombstones — and one commit of heads alone, naming every group at its end.
                // A commit before a group's first page would name it at group sequence 0, and so publish its start
                // value for this epoch: with it, a holder of the log key could later write the group as empty.
                var others: [UInt8: OpaqueChainV3] = [:]
                for carried in carriedHeads { others[carried.keyID] = OpaqueChainV3(keyID: carried.keyID, startEpoch: carried.startEpoch) }
                var parts: UInt32 = 0
                var chain = head.chainValue
                func appendPart(_ segments: [SegmentInputV3]) throws(KeychainError) -> EncodedRecordV3 {
                    let record = try RecordV3Encoder.encode(
                        kind: .part, sequence: head.sequence + 1 + UInt64(parts), part: parts, previousChain: chain, segments: segments,
                        heads: heads, keys: keys, using: &generator)
                    try log.append(record.bytes, committedEnd: log.committedEnd, headSequence: head.sequence, headChain: head.chainValue)
                    parts += 1
                    chain = record.chainTag
                    heads = record.heads
                    return record
                }
                var batch: [SegmentInputV3] = []
                var batchBytes = 0
                func writeCopied() throws(KeychainError) {
                    guard !batch.isEmpty else { return }
                    _ = try appendPart(batch)
                    batch.removeAll()
                    batchBytes = 0
                }
                for segment in copied {
                    if batchBytes + segment.bytes.count > Self.copiedBytesPerRecord || batch.count == Self.copiedSegmentsPerRecord {
                        try writeCopied()
                    }
                    var opaque = others[segment.keyID] ?? OpaqueChainV3(keyID: segment.keyID, startEpoch: keys.startEpoch(of: segment.keyID))
                    opaque.advance(pageTag: segment.bytes[segment.segment.pageTag], byteCount: segment.bytes.count)
                    others[segment.keyID] = opaque
                    heads = heads.setting(
                        GroupHeadV3(keyID: opaque.keyID, startEpoch: opaque.startEpoch, groupSequence: opaque.sequence, lastTag: opaque.lastTag))
                    batch.append(.copy(segment))
                    batchBytes += segment.bytes.count
                }
                try writeCopied()
                func write(_ entries: inout [EntryV2]) throws(KeychainError) {
                    // Each group's entries in its own pages, the groups in increasing key id (§2.11); the secrets are
                    // handed back in the order of `entries`.
                    var keyIDs: [UInt8] = []
                    keyIDs.reserveCapacity(entries.count)
                    for entry in entries { keyIDs.append(try keyID(of: entry)) }
                    let order = entries.indices.sorted { keyIDs[$0] != keyIDs[$1] ? keyIDs[$0] < keyIDs[$1] : $0 < $1 }
                    var grouped: [EntryV2] = []
                    grouped.reserveCapacity(entries.count)
                    for position in order { grouped.append(entries[position]) }
                    defer {
                        EntryV2.wipeSecrets(&grouped)
                        EntryV2.wipeSecrets(&entries)
                        entries.removeAll(keepingCapacity: true)
                    }
                    let record = try appendPart(try segments(grouped, groups: order.map { keyIDs[$0] }, keys: groups))
                    let sealed = try sealedSecrets(of: record.bytes, entries: grouped)
                    var byPosition = [SealedSecret?](repeating: nil, count: entries.count)
                    var next = 0
                    for position in order {
                        switch entries[position] {
                        case .put, .copy:
                            byPosition[position] = sealed[next]
                            next += 1
                        case .delete, .tombstone:
                            continue
                        }
                    }
                    secrets += byPosition.compactMap { $0 }
                }
                try RewriteEntries.forEachBatch(
                    itemCount: itemCount, item: item, decryptSecret: decryptSecret, copiedSecretBox: nil, tombstones: tombstones,
                    commit: write)
                // The commit: heads alone, every group at its end — group sequence 0 only for a group with no page in
                // the file, which is then what the group is. A file with nothing to write is this commit alone.
                let sequence = head.sequence + 1 + UInt64(parts)
                let record = try RecordV3Encoder.encode(
                    kind: .commit, sequence: sequence, part: parts, previousChain: chain, segments: [], heads: heads, keys: keys,
                    using: &generator)
                head = Head(epoch: epoch, sequence: sequence, chainValue: record.chainTag)
                try log.append(record.bytes, committedEnd: log.writtenEnd + record.bytes.count, headSequence: head.sequence, headChain: head.chainValue)
                guard secrets.count == itemCount else {
                    throw KeychainError.invalidParameter("internal error: \(secrets.count) of \(itemCount) items written to a new file")
                }
                let header = FileHeaderV3(
                    fileID: fileID, epoch: epoch, epochSalt: epochSalt, rewriteEnd: UInt64(log.writtenEnd), rewriteHeadSequence: head.sequence,
                    rewriteHeadChain: head.chainValue, tombstoneHorizonDays: fileKeys.tombstoneHorizonDays,
                    sealedKeyTable: fileKeys.sealedKeyTable, slots: fileKeys.slots, chainStarts: chainStarts)
                let headerBytes = try header.encode(headerKey: logKeys.header)
                guard HeaderRunV3.pageCount(forLength: headerBytes.count) == pageCount else {
                    throw KeychainError.invalidParameter("internal error: the header's length changed while the file was written")
                }
                let run = HeaderRunV3.encode(headerBytes)
                for offset in [0, HeaderRunV3.runBOffset(pageCount: pageCount)] {
                    try run.withBytes { (raw) throws(KeychainError) in try staging.writeAll(raw, at: offset) }
                }
                return (header, headerBytes, log, head, heads, others, secrets)
            },
            afterPlacing: { (written, staging, identity) in
                var chains = groups.byKeyID.mapValues { GroupChainV3(keys: $0, startEpoch: keys.startEpoch(of: $0.keyID)) }
                for head in written.heads.groups {
                    if let keys = groups.byKeyID[head.keyID] { chains[head.keyID] = GroupChainV3(keys: keys, at: head) }
                }
                let state = FileState(
                    file: staging, pageCount: pageCount, logFile: written.log.file, identity: identity, header: written.header, headerBytes: written.bytes, logKey: fileKeys.logKey,
                    root: fileKeys.root, logKeys: logKeys, keys: keys, groups: groups, log: written.log, runsIntact: [true, true],
                    replayed: ReplayV2.Outcome(
                        head: written.head, end: written.log.writtenEnd, tornTail: nil, tombstones: tombstones, repairs: [], groups: chains,
                        tombstoneGroups: tombstoneGroups.filter { tombstones[$0.key] != nil }, others: written.others,
                        heads: written.heads),
                    size: (try? staging.size())
                        ?? HeaderRunShiftedFileHandle.physical(HealingLayout.physicalEnd(ofLog: written.log.writtenEnd), pageCount: pageCount),
                    headerSeen: HeaderFingerprint(
                        written: HeaderRunV3.encode(written.bytes), at: [0, HeaderRunV3.runBOffset(pageCount: pageCount)]))
                loaded = (state, written.secrets)
                afterRename((state, written.secrets))
            })
        guard let loaded else { throw .invalidParameter("internal error: a new file was written but not put in place") }
        return loaded
    }
}
