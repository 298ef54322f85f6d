#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(KeychainFileInternals) import KeychainCrypto

// Writing a whole version 3 file (Docs/FormatVersion3.md §2.10): a new keychain, compaction and credential changes.
extension RecordLogV3 {
    /// What a whole file is written under: the keys and the parts of the header a rewrite keeps.
    struct FileKeys {
        let fileID: [UInt8]
        let logKey: SymmetricKey
        /// The root key, which the log keeps to open a file another process compacts.
        let root: SymmetricKey
        /// Every group's key id, name and keys (they name the file id, not the epoch).
        let groups: AccessGroupsV3
        /// The key table as sealed under the root key: it names no epoch, so a rewrite keeps its bytes.
        let sealedKeyTable: [UInt8]
        let slots: [KeySlotV3]
        let tombstoneHorizonDays: UInt32
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
        return (RecordLogV3(path: path, fileSystem: fileSystem, credential: credential, clock: clock, state: state), ItemIndex())
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
    func rewrite(
        under keys: FileKeys, index: inout ItemIndex, credential newCredential: Credential, using generator: inout RandomSource
    ) throws(KeychainError) {
        try checkTailMayBeDropped()
        guard epoch < UInt64.max else { throw .limitReached("the epoch counter is exhausted") }
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
            tombstoneGroups: state.replayed.tombstoneGroups, fileSystem: fileSystem, using: &generator,
            afterRename: { (written) in
                self.adopt(written.state)
                self.credential = newCredential
                placed = written.secrets
            })
    }

    /// Writes a whole version 3 file — the items as commit records through a healing log, then the two header
    /// runs naming the records' end and head — under a temporary name, makes it durable and puts it at `path`
    /// (``StagedFile``). `afterRename` runs once it is in place. Every group's chain starts at `epoch`; each item is in
    /// its group's pages, each tombstone in the group `tombstoneGroups` names (§2.11).
    static func writeFile<Generator: RandomNumberGenerator>(
        at path: String, replacing: Bool, keys fileKeys: FileKeys, epoch: UInt64, itemCount: Int, item: (Int) -> StoredItem,
        decryptSecret: (StoredItem) throws(KeychainError) -> [UInt8], tombstones: [ItemID: Int64], tombstoneGroups: [ItemID: UInt8],
        fileSystem: any FileSystem,
        using generator: inout Generator, afterRename: ((state: FileState, secrets: [SealedSecret])) -> Void = { _ in }
    ) throws(KeychainError) -> (state: FileState, secrets: [SealedSecret]) {
        let fileID = fileKeys.fileID
        let epochSalt = randomBytes(32, using: &generator)
        let logKeys = try LogKeysV3(logKey: fileKeys.logKey, fileID: fileID, epoch: epoch, epochSalt: epochSalt)
        let draft = FileHeaderV3(
            fileID: fileID, epoch: epoch, epochSalt: epochSalt, rewriteEnd: 0, rewriteHeadSequence: 0,
            rewriteHeadChain: [UInt8](repeating: 0, count: 16), tombstoneHorizonDays: fileKeys.tombstoneHorizonDays,
            sealedKeyTable: fileKeys.sealedKeyTable, slots: fileKeys.slots)
        guard draft.length <= FileHeaderV3.maximumLength else {
            throw .limitReached(
                "the key slots and key table take \(draft.length) bytes, more than sixteen header pages (\(FileHeaderV3.maximumLength)): remove a credential")
        }
        let pageCount = HeaderRunV3.pageCount(forLength: draft.length)
        let initialChain = draft.initialChainValue(headerKey: logKeys.header)
        let keys = try RecordKeysV3(fileID: fileID, epoch: epoch, chainKey: logKeys.chain, headsKey: logKeys.heads)
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
            body: { (staging) throws(KeychainError) -> (header: FileHeaderV3, bytes: [UInt8], log: HealingLog, head: Head, heads: HeadsV3, secrets: [SealedSecret]) in
                // The prefix is zeros — two empty commit slots — until the header runs are written last.
                try staging.truncate(to: HeaderRunV3.logStart(pageCount: pageCount))
                let log = HealingLog(
                    creating: HeaderRunShiftedFileHandle.logFile(staging, pageCount: pageCount), headerKey: logKeys.header, epoch: epoch)
                var head = Head(epoch: epoch, sequence: 0, chainValue: initialChain)
                var heads = HeadsV3()
                var secrets: [SealedSecret] = []
                secrets.reserveCapacity(itemCount)
                func commit(_ entries: inout [EntryV2]) throws(KeychainError) {
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
                    let record = try RecordV3Encoder.encode(
                        kind: .commit, sequence: head.sequence + 1, part: 0, previousChain: head.chainValue,
                        segments: segments(grouped, groups: order.map { keyIDs[$0] }, keys: groups), heads: heads, keys: keys,
                        using: &generator)
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
                    head = Head(epoch: epoch, sequence: head.sequence + 1, chainValue: record.chainTag)
                    heads = record.heads
                    try log.append(record.bytes, committedEnd: log.writtenEnd + record.bytes.count, headSequence: head.sequence, headChain: head.chainValue)
                }
                try RewriteEntries.forEachBatch(
                    itemCount: itemCount, item: item, decryptSecret: decryptSecret, copiedSecretBox: nil, tombstones: tombstones,
                    commit: commit)
                if log.newest == nil {
                    // A file with no records yet still gets a commit slot: "no slot reads" then always means damage.
                    try log.commit(
                        writtenEnd: 0, committedEnd: 0, headSequence: head.sequence, headChain: head.chainValue, parity: ChunkParity(),
                        lastWrite: 0..<0)
                }
                guard secrets.count == itemCount else {
                    throw KeychainError.invalidParameter("internal error: \(secrets.count) of \(itemCount) items written to a new file")
                }
                let header = FileHeaderV3(
                    fileID: fileID, epoch: epoch, epochSalt: epochSalt, rewriteEnd: UInt64(log.writtenEnd), rewriteHeadSequence: head.sequence,
                    rewriteHeadChain: head.chainValue, tombstoneHorizonDays: fileKeys.tombstoneHorizonDays,
                    sealedKeyTable: fileKeys.sealedKeyTable, slots: fileKeys.slots)
                let headerBytes = try header.encode(headerKey: logKeys.header)
                guard HeaderRunV3.pageCount(forLength: headerBytes.count) == pageCount else {
                    throw KeychainError.invalidParameter("internal error: the header's length changed while the file was written")
                }
                let run = HeaderRunV3.encode(headerBytes)
                for offset in [0, HeaderRunV3.runBOffset(pageCount: pageCount)] {
                    try run.withBytes { (raw) throws(KeychainError) in try staging.writeAll(raw, at: offset) }
                }
                return (header, headerBytes, log, head, heads, secrets)
            },
            afterPlacing: { (written, staging, identity) in
                var chains = groups.byKeyID.mapValues { GroupChainV3(keys: $0, startEpoch: epoch) }
                for head in written.heads.groups {
                    if let keys = groups.byKeyID[head.keyID] { chains[head.keyID] = GroupChainV3(keys: keys, at: head) }
                }
                let state = FileState(
                    file: staging, pageCount: pageCount, logFile: written.log.file, identity: identity, header: written.header, headerBytes: written.bytes, logKey: fileKeys.logKey,
                    root: fileKeys.root, logKeys: logKeys, keys: keys, groups: groups, log: written.log, runsIntact: [true, true],
                    replayed: ReplayV2.Outcome(
                        head: written.head, end: written.log.writtenEnd, tornTail: nil, tombstones: tombstones, repairs: [], groups: chains,
                        tombstoneGroups: tombstoneGroups.filter { tombstones[$0.key] != nil }, heads: written.head.sequence > 0 ? written.heads : nil),
                    size: (try? staging.size())
                        ?? HeaderRunShiftedFileHandle.physical(HealingLayout.physicalEnd(ofLog: written.log.writtenEnd), pageCount: pageCount))
                loaded = (state, written.secrets)
                afterRename((state, written.secrets))
            })
        guard let loaded else { throw .invalidParameter("internal error: a new file was written but not put in place") }
        return loaded
    }
}
