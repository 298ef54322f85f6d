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

/// A format version 2 keychain file (Docs/FormatVersion2.md): two header pages, the commit slots and the
/// healing log of records, as `Keychain` uses it (``KeychainLog``).
///
/// The records are read as they stand in the file and verified by their tags; only where they do not verify is
/// the log's parity asked for repaired bytes (``ReplayV2``), which are used only if they then verify, and written
/// back by the next write. Appends commit through the log's slots; a batch larger than a record is written as a
/// transaction in parts, committed by its last.
///
/// Not thread-safe on its own, and takes no lock file: the `Keychain` that owns it serialises every call and
/// holds the lock file as SPEC.md §16 requires.
final class RecordLogV2 {
    let path: String
    let fileSystem: any FileSystem
    /// The credential that opened the file: tried when a rewritten file no longer opens with the master key.
    private(set) var credential: Credential
    /// The time deletions are stamped with.
    let clock: @Sendable () -> Date
    private(set) var state: FileState
    /// Set when the state may no longer describe the file (a write failed part-way): the next catch-up reads the
    /// file again from its header.
    var mustReload = false
    var pathCheckInterval: UInt64 = 10_000_000
    var lastCurrent: (counter: UInt64, at: UInt64)? = nil
    /// Set for a log opened with recovery: what was read stays as it is, and nothing is written.
    var isRecoveryView = false
    /// The cap on one Argon2id derivation's memory when the file must be opened with `credential` again.
    var keyDerivationMemoryLimitKiB = KeyDerivationBudget.standardMemoryLimitKiB
    /// The header pages of a file at the path that neither the master key held nor `credential` opened (another
    /// process rotated the master key away from it): while the path holds a file with these pages, catching up
    /// fails with `wrongCredentials` at once, without deriving the credential's key again (SPEC.md §16). Other
    /// pages (the header rewritten, or an older file restored) are tried again, once.
    var headerRefusingCredential: [UInt8]? = nil
    var unconfirmedDurability: KeychainError?

    /// One open, verified file.
    struct FileState {
        let file: any KeychainFileHandle
        let identity: FileIdentity
        let header: FileHeaderV2
        /// The verified copy's bytes, which a writer puts back in a page that does not hold them.
        let headerBytes: [UInt8]
        let masterKey: SymmetricKey
        let headerKey: SymmetricKey
        let keys: RecordKeysV2
        let initialChain: [UInt8]
        let log: HealingLog
        /// Whether each header page holds the verified copy (a writer rewrites the ones that do not).
        var pagesIntact: [Bool]
        var replayed: ReplayV2.Outcome
        /// The file's size when this state last matched it.
        var size: Int
        /// The first sector of each header page as this state read or wrote it: what shows the file written over in place.
        var headerSeen: HeaderFingerprint
        /// The position of the key slot the credential opened, when this state came from opening with it: a
        /// legacy slot there becomes a committed one at the next rewrite.
        var openedSlot: Int? = nil
    }

    init(path: String, fileSystem: any FileSystem, credential: Credential, clock: @escaping @Sendable () -> Date, state: FileState) {
        self.path = path
        self.fileSystem = fileSystem
        self.credential = credential
        self.clock = clock
        self.state = state
    }

    deinit { state.file.close() }

    func adopt(_ newState: FileState) {
        if newState.file !== state.file { state.file.close() }
        state = newState
        headerRefusingCredential = nil
    }

    var file: any KeychainFileHandle { state.file }
    var formatVersion: Int { Int(FileHeaderV2.version) }
    var fileID: [UInt8] { state.header.fileID }
    var epoch: UInt64 { state.header.epoch }
    var tombstones: [ItemID: Int64] { state.replayed.tombstones }
    var masterKey: SymmetricKey { state.masterKey }
    var head: Head { state.replayed.head }
    var end: Int { state.replayed.end }
    var tornTail: TornTail? { state.replayed.tornTail }
    /// The chunks of the log that open repaired from parity, not yet written back.
    var repairedChunks: [Int] { state.replayed.repairs.map(\.chunk) }

    // MARK: Opening

    /// Opens, unlocks and replays a version 2 file, refusing it if it does not contain `expectedHead`.
    static func open(
        at path: String, credential: Credential, expectedHead: Head?, fileSystem: any FileSystem, clock: @escaping @Sendable () -> Date
    ) throws(KeychainError) -> (RecordLogV2, ItemIndex) {
        try open(at: path, file: try fileSystem.openExisting(path), credential: credential, expectedHead: expectedHead, fileSystem: fileSystem, clock: clock)
    }

    /// ``open(at:credential:expectedHead:fileSystem:clock:)`` of a file already open, which is closed if this throws.
    static func open(
        at path: String, file: any KeychainFileHandle, credential: Credential, expectedHead: Head?, fileSystem: any FileSystem,
        clock: @escaping @Sendable () -> Date, keyDerivationMemoryLimitKiB: Int = KeyDerivationBudget.standardMemoryLimitKiB
    ) throws(KeychainError) -> (RecordLogV2, ItemIndex) {
        do throws(KeychainError) {
            try credential.validate()
            let loaded = try load(
                file: file, credential: credential, heldKey: nil, pin: expectedHead, memoryLimitKiB: keyDerivationMemoryLimitKiB)
            let log = RecordLogV2(path: path, fileSystem: fileSystem, credential: credential, clock: clock, state: loaded.state)
            log.keyDerivationMemoryLimitKiB = keyDerivationMemoryLimitKiB
            return (log, loaded.index)
        } catch {
            file.close()
            throw error
        }
    }

    /// Opens a version 2 file for reading what still authenticates (``ReplayV2/recover()``): a log that writes
    /// nothing and does not follow later changes, the items, and the damage it could not read.
    static func openRecovering(
        at path: String, file: any KeychainFileHandle, credential: Credential, expectedHead: Head?, fileSystem: any FileSystem,
        clock: @escaping @Sendable () -> Date, keyDerivationMemoryLimitKiB: Int = KeyDerivationBudget.standardMemoryLimitKiB
    ) throws(KeychainError) -> (RecordLogV2, ItemIndex, [Damage]) {
        do throws(KeychainError) {
            try credential.validate()
            let loaded = try load(
                file: file, credential: credential, heldKey: nil, pin: expectedHead, recovering: true,
                memoryLimitKiB: keyDerivationMemoryLimitKiB)
            let log = RecordLogV2(path: path, fileSystem: fileSystem, credential: credential, clock: clock, state: loaded.state)
            log.isRecoveryView = true
            return (log, loaded.index, loaded.damage)
        } catch {
            file.close()
            throw error
        }
    }

    /// ``load(file:credential:heldKey:pin:recovering:memoryLimitKiB:)`` for a log that remembers the header pages
    /// its credential does not open (``headerRefusingCredential``), given as `refused`: the pages of `file`, when
    /// they are those, are refused with `wrongCredentials` at once — `heldKey` failed on them before and
    /// `credential` would again — and when `credential` is found not to open them they become `refused`.
    static func load(
        file: any KeychainFileHandle, credential: Credential, heldKey: SymmetricKey?, pin: Head?, memoryLimitKiB: Int,
        refused: inout [UInt8]?
    ) throws(KeychainError) -> (state: FileState, index: ItemIndex, damage: [Damage]) {
        let pages = HealingLog.readTolerating(file, count: HealingLayout.headerPageLength, at: 0).bytes
            + HealingLog.readTolerating(file, count: HealingLayout.headerPageLength, at: HealingLayout.headerBOffset).bytes
        if refused == pages { throw .wrongCredentials }
        do throws(KeychainError) {
            return try load(file: file, credential: credential, heldKey: heldKey, pin: pin, memoryLimitKiB: memoryLimitKiB)
        } catch .wrongCredentials {
            // Only the credential answers wrongCredentials here: a held key that does not open the pages falls back to it.
            refused = pages
            throw .wrongCredentials
        }
    }

    /// Reads the header pages of `file`, opens them with `heldKey` (a master key this process holds) or else
    /// `credential`, opens the log and replays it.
    static func load(
        file: any KeychainFileHandle, credential: Credential, heldKey: SymmetricKey?, pin: Head?, recovering: Bool = false,
        memoryLimitKiB: Int = KeyDerivationBudget.standardMemoryLimitKiB
    ) throws(KeychainError) -> (state: FileState, index: ItemIndex, damage: [Damage]) {
        let readA = HealingLog.readTolerating(file, count: HealingLayout.headerPageLength, at: 0)
        let readB = HealingLog.readTolerating(file, count: HealingLayout.headerPageLength, at: HealingLayout.headerBOffset)
        let (pageA, pageB) = (readA.bytes, readB.bytes)
        let opened: OpenedHeaderV2
        if let heldKey, let held = try? OpenedHeaderV2(pageA: pageA, pageB: pageB, masterKey: heldKey) {
            opened = held
        } else {
            opened = try OpenedHeaderV2(
                pageA: pageA, pageB: pageB, credential: credential, budget: KeyDerivationBudget(memoryLimitKiB: memoryLimitKiB))
        }
        let header = opened.header
        let keys = try RecordKeysV2(
            fileID: header.fileID, epoch: header.epoch, recordKey: opened.keys.record,
            secretKey: try RecordKeysV2.secretKey(masterKey: opened.masterKey, fileID: header.fileID))
        let log = try HealingLog(opening: file, headerKey: opened.keys.header, epoch: header.epoch, rewriteEnd: Int(header.rewriteEnd))
        var replay = ReplayV2(
            log: log, keys: .version2(keys), start: Head(epoch: header.epoch, sequence: 0, chainValue: opened.initialChain),
            rewriteHead: Head(epoch: header.epoch, sequence: header.rewriteHeadSequence, chainValue: header.rewriteHeadChain), watching: pin)
        if recovering {
            try replay.recover()
        } else {
            try replay.run()
            try replay.checkHeads()
        }
        if let pin { try RecordLog.checkContains(pin, epoch: header.epoch, head: replay.outcome.head, chainAtPin: replay.watchedChain) }
        let state = FileState(
            file: file, identity: try file.identity(), header: header, headerBytes: opened.headerBytes, masterKey: opened.masterKey, headerKey: opened.keys.header,
            keys: keys, initialChain: opened.initialChain, log: log, pagesIntact: opened.pages.map(\.isIntact),
            replayed: replay.outcome, size: try file.size(), headerSeen: HeaderFingerprint(reads: [readA, readB], at: OpenedHeaderV2.pageOffsets),
            openedSlot: heldKey == nil ? opened.slotIndex : nil)
        return (state, replay.index, replay.damage)
    }

    // MARK: Catching up with other processes (SPEC.md §16)

    /// Whether another file is at the path, or this one's size or header is not what this log last saw: every
    /// append, cut and repair of a version 2 file that changes what it holds changes its size or its identity, and
    /// a copy written over it in place changes its header (``HeaderFingerprint``).
    func hasChanged() throws(KeychainError) -> Bool {
        if isRecoveryView { return false }
        if mustReload { return true }
        guard let current = try fileSystem.identityAndSize(of: path) else { return true }
        guard current.identity == state.identity, current.size == state.size else { return true }
        return try !state.headerSeen.matches(state.file, size: current.size)
    }

    /// Catches up: replays the commits appended after this log's end, or reads the file again from its header
    /// when another file was put at the path (it must be the same keychain at this head or later), when its
    /// commits no longer reach this log's end, when another header was written over this one in place, or after a
    /// failed write.
    func refresh(_ index: inout ItemIndex, acknowledgement: [UInt8]?) throws(KeychainError) {
        guard !isRecoveryView else { return }
        guard let current = try fileSystem.identity(of: path) else {
            throw .io(operation: "stat (the keychain file is gone)", errno: ENOENT, path: path)
        }
        let size = try file.size()
        // A copy written over this file in place (same identity, often the same size, another epoch's header and
        // slots) is read again from its header: its slots cannot be compared with this epoch's.
        var reloading = mustReload || current != state.identity
        if !reloading { reloading = try !state.headerSeen.matches(file, size: size) }
        if reloading {
            try reload(&index)
            mustReload = false
            return
        }
        // The size alone does not show a cut followed by an append of the same length: the slots do.
        guard size != state.size || !state.log.slotsAsPlaced() else { return }
        let log = try HealingLog(opening: file, headerKey: state.headerKey, epoch: state.header.epoch, rewriteEnd: Int(state.header.rewriteEnd))
        guard log.committedEnd >= end else {
            try reload(&index)
            return
        }
        var replay = ReplayV2(log: log, keys: .version2(state.keys), continuing: state.replayed, index: ItemIndex())
        swap(&replay.index, &index)
        var caughtUp = false
        defer {
            swap(&replay.index, &index)
            // What verified is kept; after a failure the next call reads the file again, and fails again, rather
            // than serving what verified as if it were all.
            if !caughtUp { mustReload = true }
            state = FileState(
                file: state.file, identity: state.identity, header: state.header, headerBytes: state.headerBytes, masterKey: state.masterKey,
                headerKey: state.headerKey, keys: state.keys, initialChain: state.initialChain, log: log,
                pagesIntact: state.pagesIntact, replayed: replay.outcome, size: caughtUp ? size : state.size, headerSeen: state.headerSeen,
                openedSlot: state.openedSlot)
        }
        try replay.run()
        try replay.checkHeads()
        caughtUp = true
    }

    /// Opens the file now at the path and replaces this log's state with it.
    func reload(_ index: inout ItemIndex) throws(KeychainError) {
        let newFile = try fileSystem.openExisting(path)
        do throws(KeychainError) {
            guard try Self.isVersion2(newFile) else {
                throw KeychainError.corrupted(offset: 8, reason: "another file, not of format version 2, was put at \(path)")
            }
            let loaded = try Self.load(
                file: newFile, credential: credential, heldKey: masterKey, pin: head, memoryLimitKiB: keyDerivationMemoryLimitKiB,
                refused: &headerRefusingCredential)
            guard loaded.state.header.fileID == fileID else {
                throw KeychainError.corrupted(offset: 16, reason: "another keychain (a different file id) was put at \(path)")
            }
            adopt(loaded.state)
            index = loaded.index
        } catch {
            newFile.close()
            throw error
        }
    }

    /// Whether `file` has the layout of a version 2 file: its first header page declares a version 2 header, or
    /// its second does, or either page's parity yields one. Anything else is read as version 1, whose reader
    /// reports a file it cannot read (`notAKeychain`, or `unsupportedVersion` for a version it does not know).
    static func isVersion2(_ file: any KeychainFileHandle) throws(KeychainError) -> Bool {
        let size = try file.size()
        guard size >= 16 else { return false }
        // An unreadable first sector reads as zeros: page B may still say what the file is.
        let prefix = HealingLog.readTolerating(file, count: 16, at: 0).bytes
        if FileHeaderV2.declaredLength(prefix) != nil { return true }
        if Array(prefix[0..<8]) == Format.magic && prefix[8] == 0 && prefix[9] == UInt8(Format.version) { return false }
        guard size > HealingLayout.headerBOffset else { return false }
        let pageB = HealingLog.readTolerating(file, count: HealingLayout.headerPageLength, at: HealingLayout.headerBOffset).bytes
        if FileHeaderV2.declaredLength(pageB) != nil { return true }
        let pageA = HealingLog.readTolerating(file, count: HealingLayout.headerPageLength, at: 0).bytes
        return zip([pageA, pageB], OpenedHeaderV2.pageOffsets).contains { HeaderPage.decode($0, fileOffset: $1).header != nil }
    }

    // MARK: Writing

    func checkWritable() throws(KeychainError) {
        guard !isRecoveryView else {
            throw .invalidParameter(
                "this keychain was opened with recovery and is read-only: salvage it, or repair it (kcf repair), to write again")
        }
    }

    /// Version 2 needs no acknowledgement in the lock file: its commit slots say what was committed.
    func acknowledgementBytes() -> [UInt8]? { nil }

    func takeUnconfirmedDurability() -> KeychainError? {
        defer { unconfirmedDurability = nil }
        return unconfirmedDurability
    }

    /// Before a write: writes back what the open repaired, takes the last chunk's parity from records that
    /// verified, and cuts what follows the last commit (a remnant, or the parts of an undone transaction).
    func prepareForWrite() throws(KeychainError) {
        try checkWritable()
        try checkTailMayBeDropped()
        let log = state.log
        // Nothing is cut or rewritten on the strength of slots another writer has changed since.
        try log.checkSlotsUnchanged()
        // A header page that does not hold the verified copy is written again, one page at a time, so that a
        // crash while writing it leaves the other.
        for (page, intact) in state.pagesIntact.enumerated() where !intact {
            let written = HeaderPage.encode(state.headerBytes)
            try written.withBytes { (raw) throws(KeychainError) in
                try file.writeAll(raw, at: OpenedHeaderV2.pageOffsets[page])
            }
            try file.sync()
            state.pagesIntact[page] = true
            state.headerSeen = state.headerSeen.replacing(at: OpenedHeaderV2.pageOffsets[page], with: written)
        }
        // Parity a short file lost, of complete chunks whose records verified as they read, goes back before any
        // write-back extends the file over it (SPEC §26.5).
        try log.poisoningOnFailure { () throws(KeychainError) in
            try log.restoreParity(ofChunksBelow: end, except: Set(state.replayed.repairs.map(\.chunk)))
        }
        for repair in state.replayed.repairs { try log.writeBack(repair) }
        state.replayed.repairs = []
        // The last chunk's records verified up to the written end — as they read, or as repaired and written back
        // above — and its parity was what did not match (or a repair confirmed only in part left it so): it is
        // computed again from them.
        if log.appendRefusal == .tailMismatch || log.appendRefusal == .lastWriteMissing, end == log.writtenEnd {
            try log.confirmLastChunk()
        }
        if log.writtenEnd > end { try log.cut(to: end) } else { try log.cutRemnant() }
        state.replayed.tornTail = nil
    }

    /// Takes the file's size now as the one this state describes, after writes that changed no record (a
    /// write-back, a cut, a parity scrub): the next call does not take the change for another process's.
    func noteSizeAfterWriting() throws(KeychainError) {
        state.size = try file.size()
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
        let time = Self.milliseconds(clock())
        // Plaintext copies of the secrets go as each part is sealed; those kept in the puts' reserved blocks at the end.
        defer { for case .put(_, let attributes, .inReservedBlock) in entries { attributes.encoded.storage.wipeReserved() } }
        let parts = Self.partRanges(of: entries)
        let before = state.replayed
        var secrets: [SealedSecret] = []
        var deletions: [(ItemID, Int64)] = []
        var position = end
        var chain = head.chainValue
        // Each part is sealed and appended before the next is made, so that a batch of any size is never held
        // sealed whole in memory; only the last part commits (a crash before it leaves parts the next writer cuts).
        for (part, range) in parts.enumerated() {
            let isLast = part == parts.count - 1
            var sealed: [EntryV2] = []
            sealed.reserveCapacity(range.count)
            for index in range {
                switch entries[index] {
                case .put(let id, let attributes, let secret):
                    sealed.append(.put(id: id, attributes: attributes, secret: secret.plaintext(attributes: attributes)))
                case .delete(let id):
                    sealed.append(.delete(id: id, time: time))
                    deletions.append((id, time))
                case .deletion(let id, let deleted):
                    sealed.append(.delete(id: id, time: deleted))
                    deletions.append((id, deleted))
                case .tombstone(let id, let deleted, _):
                    sealed.append(.tombstone(id: id, time: deleted))
                    deletions.append((id, deleted))
                }
            }
            defer { EntryV2.wipeSecrets(&sealed) }
            let entryBytes = sealed.compactMap { (entry) -> Int? in if case .put = entry { return entry.pageByteCount } else { return nil } }
            let sequence = head.sequence + 1 + UInt64(part)
            let record: (bytes: [UInt8], chain: [UInt8])
            do throws(KeychainError) {
                record = try RecordV2Encoder.encode(
                    sealed, kind: isLast ? .commit : .part, sequence: sequence, part: UInt32(part), previousChain: chain,
                    keys: state.keys, using: &generator)
            } catch {
                // Parts already appended lie past the commit end: taken back now, as when a write fails.
                if part > 0 {
                    mustReload = true
                    takeBackParts(to: before.end)
                }
                throw error
            }
            try appendRecord(
                record.bytes, at: position, isLast: isLast, sequence: sequence, chain: record.chain, before: (before.end, before.head))
            secrets += try Self.sealedSecrets(of: record.bytes, entryBytes: entryBytes[...])
            position += record.bytes.count
            chain = record.chain
        }
        state.replayed.head = Head(epoch: epoch, sequence: head.sequence + UInt64(parts.count), chainValue: chain)
        state.replayed.end = position
        for (id, time) in deletions { state.replayed.tombstones[id] = time }
        state.size = (try? file.size()) ?? state.size
        return AppendedSecrets(count: secrets.count) { secrets[$0] }
    }

    /// The entries of each record of a commit: as many as fit a record's 15 MiB (below the format's 16, for the
    /// pages' overhead), at least one each. With `paddedPages` (version 3, whose pages are padded to size classes,
    /// ``GroupPageV3/paddedLength(_:)``), each entry's page bytes count as at most padding makes them: twice, and 256
    /// at least (a page of one entry).
    static func partRanges<Entries: RandomAccessCollection<LogEntry>>(
        of entries: Entries, paddedPages: Bool = false
    ) -> [Range<Int>] where Entries.Index == Int {
        var parts: [Range<Int>] = []
        var start = entries.startIndex
        var bytes = 0
        for index in entries.indices {
            let size: Int
            switch entries[index] {
            case .put(_, let attributes, let secret):
                // The page entry, the secret box and its field, and a share of a page's box for every 8 KiB.
                let entry = 1 + 4 + AttributeCoding.encodedByteCount(attributes) + 4 + 16
                let page = paddedPages ? max(256, 2 * entry) : entry
                size = page + entry / 128 + RecordV2.boxFieldHeaderSize + secret.count + 28
            case .delete, .deletion, .tombstone:
                size = paddedPages ? 256 : 26
            }
            if index > start, bytes + size > partLimit {
                parts.append(start..<index)
                start = index
                bytes = 0
            }
            bytes += size
        }
        parts.append(start..<entries.endIndex)
        return parts
    }

    /// The bytes of entries a record of a commit is given (``partRanges(of:)``).
    static let partLimit = 15 << 20

    /// The sealed secrets of a record's puts, in entry order, copied from its bytes (which verified as written).
    ///
    /// - Parameter entryBytes: The page bytes of the record's puts' entries, in order (for the live-byte count).
    static func sealedSecrets(of record: [UInt8], entryBytes: ArraySlice<Int>) throws(KeychainError) -> [SealedSecret] {
        let scanned = try RecordV2Decoder.scan(record, at: 0)
        var secrets: [SealedSecret] = []
        var entry = entryBytes.startIndex
        for page in scanned.pages {
            for box in page.secrets {
                let bytes = entry < entryBytes.endIndex ? entryBytes[entry] : 0
                secrets.append(sealedSecret(box: Array(record[box]), entryBytes: bytes))
                entry += 1
            }
        }
        return secrets
    }

    /// A version 2 secret box as the index holds it: only the box (its associated data names the item).
    ///
    /// - Parameter entryBytes: The bytes of the put's entry in its page: with the box's field, the file bytes
    ///   the item keeps live.
    static func sealedSecret(box: [UInt8], entryBytes: Int) -> SealedSecret {
        SealedSecret(
            box: box, sequence: 0, kind: .put, entryCount: 0, entryIndex: 0, previousChain: [],
            entryByteCount: RecordV2.boxFieldHeaderSize + box.count + entryBytes)
    }

    func decryptSecret(of item: StoredItem) throws(KeychainError) -> [UInt8] {
        try Self.openSecret(of: item, keys: state.keys)
    }

    func secretOpener() -> @Sendable (StoredItem) throws(KeychainError) -> [UInt8] {
        let keys = state.keys
        return { (item) throws(KeychainError) in try Self.openSecret(of: item, keys: keys) }
    }

    private static func openSecret(of item: StoredItem, keys: RecordKeysV2) throws(KeychainError) -> [UInt8] {
        let bytes = Array(item.secret.box)
        return try RecordV2Decoder.openSecret(0..<bytes.count, of: item.id, in: bytes, keys: keys)
    }

    func statistics(of index: ItemIndex) -> KeychainStatistics {
        // The live entries and the tombstones a rewrite keeps (counted whole: a count, not a walk of them per
        // commit; those past the horizon are few), with the parity that covers them, the header pages and the
        // commit slots: about what a compacted file holds, so that parity never counts as reclaimable (nor
        // towards automatic compaction).
        let tombstoneBytes = state.replayed.tombstones.count * EntryV2.deletionByteCount
        let live = min(state.size, HealingLayout.physicalEnd(ofLog: index.liveEntryBytes + tombstoneBytes))
        return KeychainStatistics(
            itemCount: index.count, liveBytes: live, deadBytes: max(0, state.size - live), fileSize: state.size, epoch: epoch)
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}

extension RecordLogV2: HealingLogWriting {
    var healingLog: HealingLog { state.log }
    var healingLogFile: any KeychainFileHandle { state.file }
    var sealKey: SymmetricKey { state.headerKey }
    var rewriteEnd: Int { Int(state.header.rewriteEnd) }
}

extension RecordLogV2 {
    /// Notes that a rewrite changing the slots as `change` says succeeded: the credential kept for opening the file
    /// again follows it (``SlotChange/credential(after:)``).
    func noteSucceeded(_ change: SlotChange) {
        credential = change.credential(after: credential)
    }
}
