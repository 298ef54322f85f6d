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

/// A format version 3 keychain file (Docs/FormatVersion3.md §2.10): version 2's prefix, commit slots and healing
/// log, with version 3's header (slots with grants, the sealed key table) and records (segments per group, group
/// chains, heads), as `Keychain` uses it (``KeychainLog``).
///
/// This step of issue 31 opens with full credentials only. Each item is in its access group's pages, under that
/// group's keys (§2.11); replay, repair from parity, appends in parts, catching up and compaction are version 2's
/// (``ReplayV2``, ``HealingLog``) over version 3's records.
///
/// Not thread-safe on its own, and takes no lock file: the `Keychain` that owns it serialises every call and
/// holds the lock file as SPEC.md §16 requires.
final class RecordLogV3 {
    let path: String
    let fileSystem: any FileSystem
    /// The credential that opened the file: a file another process rewrote is opened with it again.
    var credential: Credential
    /// The time deletions are stamped with.
    let clock: @Sendable () -> Date
    var state: FileState
    /// Set when the state may no longer describe the file (a write failed part-way): the next catch-up reads the
    /// file again from its header.
    var mustReload = false
    var pathCheckInterval: UInt64 = 10_000_000
    var lastCurrent: (counter: UInt64, at: UInt64)? = nil
    /// The cap on one Argon2id derivation's memory when the file must be opened with `credential` again.
    var keyDerivationMemoryLimitKiB = KeyDerivationBudget.standardMemoryLimitKiB
    var unconfirmedDurability: KeychainError?
    /// The header runs of a file at the path that neither the keys this log holds nor its credential opened: a
    /// catch-up that finds them again refuses them at once, without deriving the credential's key again (SPEC.md §16).
    var headerRefusingCredential: [UInt8]? = nil
    /// The slot `credential` opened, with its opening, kept to re-anchor it in this log's rewrites (``OwnSlotV3``).
    /// Set by an open with the credential, by the file's creation, and by this log's own rotations and
    /// re-anchorings; a catch-up that opens the file with held keys alone keeps it (a rewrite uses it only while
    /// the header holds those very slot bytes); `nil` when no open of this log asked the credential.
    var ownSlot: OwnSlotV3? = nil

    /// One open, verified file.
    struct FileState {
        let file: any KeychainFileHandle
        /// How many pages each header run has.
        let pageCount: Int
        /// What the healing log reads and writes: the file, seen with version 2's prefix (``HeaderRunShiftedFileHandle``).
        let logFile: any KeychainFileHandle
        let identity: FileIdentity
        let header: FileHeaderV3
        /// The verified copy's bytes, which a writer puts back in a run that does not hold them.
        let headerBytes: [UInt8]
        let logKey: SymmetricKey
        /// The root key of a full holder: with `logKey`, what opens a file another process compacted, no key derived.
        let root: SymmetricKey?
        let logKeys: LogKeysV3
        let keys: RecordKeysV3
        /// Every group's key id, name and keys, from the key table (a scoped holder: its grant's groups).
        let groups: AccessGroupsV3

        /// What this state's holder opens a rewritten file with before it asks its credential.
        var heldKeys: HeldKeys {
            HeldKeys(logKey: logKey, root: root, scope: groups.isScoped ? groups.scopeGroups : nil)
        }
        let log: HealingLog
        /// Whether each run (A, B) holds the verified copy (a writer rewrites the ones that do not).
        var runsIntact: [Bool]
        var replayed: ReplayV2.Outcome
        /// The file's size when this state last matched it.
        var size: Int
        /// The first sector of each header run as this state read or wrote it: what shows the file written over in place.
        var headerSeen: HeaderFingerprint
    }

    /// The key id of the default group, which every new keychain has.
    static let defaultKeyID: UInt8 = 1

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
    var formatVersion: Int { Int(FileHeaderV3.version) }
    var fileID: [UInt8] { state.header.fileID }
    var epoch: UInt64 { state.header.epoch }
    var tombstones: [ItemID: Int64] { state.replayed.tombstones }
    /// The log key `K_log`: what every credential of the file holds.
    var masterKey: SymmetricKey { state.logKey }
    /// The last record's head with every group's as the last commit left them (§37.5): what a caller pins.
    var head: Head {
        let record = state.replayed.head
        return Head(
            epoch: record.epoch, sequence: record.sequence, chainValue: record.chainValue,
            groups: (state.replayed.heads?.groups ?? []).map(Head.Group.init))
    }
    var end: Int { state.replayed.end }
    var tornTail: TornTail? { state.replayed.tornTail }
    /// Set for a log opened with recovery: read-only, and never caught up (``openRecovering(at:file:credential:expectedHead:fileSystem:clock:keyDerivationMemoryLimitKiB:)``).
    var isRecoveryView = false
    var accessScope: [String]? { state.groups.isScoped ? state.groups.scopeGroups.map(\.name) : nil }

    // MARK: Opening

    /// Opens, unlocks and replays a version 3 file with a full credential, refusing it if it does not contain
    /// `expectedHead`. `file` is closed if this throws.
    static func open(
        at path: String, file: any KeychainFileHandle, credential: Credential, expectedHead: Head?, fileSystem: any FileSystem,
        clock: @escaping @Sendable () -> Date, keyDerivationMemoryLimitKiB: Int = KeyDerivationBudget.standardMemoryLimitKiB
    ) throws(KeychainError) -> (RecordLogV3, ItemIndex) {
        do throws(KeychainError) {
            try credential.validate()
            let loaded = try load(file: file, credential: credential, held: nil, pin: expectedHead, memoryLimitKiB: keyDerivationMemoryLimitKiB)
            let log = RecordLogV3(path: path, fileSystem: fileSystem, credential: credential, clock: clock, state: loaded.state)
            log.keyDerivationMemoryLimitKiB = keyDerivationMemoryLimitKiB
            log.ownSlot = loaded.ownSlot
            return (log, loaded.index)
        } catch {
            file.close()
            throw error
        }
    }

    /// Opens, unlocks and replays a version 3 file with recovery (``Keychain/OpenOptions/recover``): the log is a
    /// read-only view of every item that still authenticates, with what could not be read. `file` is closed if this
    /// throws.
    static func openRecovering(
        at path: String, file: any KeychainFileHandle, credential: Credential, expectedHead: Head?, fileSystem: any FileSystem,
        clock: @escaping @Sendable () -> Date, keyDerivationMemoryLimitKiB: Int = KeyDerivationBudget.standardMemoryLimitKiB
    ) throws(KeychainError) -> (RecordLogV3, ItemIndex, [Damage]) {
        do throws(KeychainError) {
            try credential.validate()
            let loaded = try load(
                file: file, credential: credential, held: nil, pin: expectedHead, memoryLimitKiB: keyDerivationMemoryLimitKiB, recovering: true)
            let log = RecordLogV3(path: path, fileSystem: fileSystem, credential: credential, clock: clock, state: loaded.state)
            log.keyDerivationMemoryLimitKiB = keyDerivationMemoryLimitKiB
            log.ownSlot = loaded.ownSlot
            log.isRecoveryView = true
            return (log, loaded.index, loaded.damage)
        } catch {
            file.close()
            throw error
        }
    }

    /// The keys a log holds, with which it opens a file another process compacted (``VerifiedHeaderV3``).
    struct HeldKeys {
        let logKey: SymmetricKey
        let root: SymmetricKey?
        /// A scoped holder's groups (with their keys); `nil` for a full holder.
        let scope: [KeySetV3.Group]?
    }

    /// ``load(file:credential:held:pin:memoryLimitKiB:)`` for a log that remembers the header runs its keys and
    /// credential do not open, given as `refused`: when `file`'s runs are those, `wrongCredentials` at once — the
    /// credential failed on them before and would again — and when the credential is found not to open them, they
    /// become `refused`.
    static func load(
        file: any KeychainFileHandle, credential: Credential, held: HeldKeys?, pin: Head?, memoryLimitKiB: Int, refused: inout [UInt8]?
    ) throws(KeychainError) -> (state: FileState, index: ItemIndex, ownSlot: OwnSlotV3?) {
        let runs = headerRunBytes(file)
        if refused == runs { throw .wrongCredentials }
        do throws(KeychainError) {
            let loaded = try load(file: file, credential: credential, held: held, pin: pin, memoryLimitKiB: memoryLimitKiB)
            return (loaded.state, loaded.index, loaded.ownSlot)
        } catch .wrongCredentials {
            // Only the credential answers wrongCredentials here: held keys that do not open the runs fall back to it.
            refused = runs
            throw .wrongCredentials
        }
    }

    /// The bytes of both header runs as run A's first page declares their length (its first page alone when it
    /// declares none): what decides whether a credential opens the file, and nothing a commit changes.
    static func headerRunBytes(_ file: any KeychainFileHandle) -> [UInt8] {
        let firstPage = HealingLog.readTolerating(file, count: HeaderPage.length, at: 0).bytes
        guard let count = HeaderRunV3.declaredPageCounts(firstPage: firstPage).max() else { return firstPage }
        return HealingLog.readTolerating(file, count: count * HeaderPage.length, at: 0).bytes
            + HealingLog.readTolerating(file, count: count * HeaderPage.length, at: HeaderRunV3.runBOffset(pageCount: count)).bytes
    }

    /// Reads the header runs of `file`, opens them with `held` (keys this process holds) or else `credential`, opens
    /// the log and replays it — `recovering`, past damage (``ReplayV2/recoverVersion3(keys:groupNames:followsEveryGroup:)``),
    /// with what could not be read, at file offsets; with the slot the credential opened, if it was asked.
    static func load(
        file: any KeychainFileHandle, credential: Credential, held: HeldKeys?, pin: Head?, memoryLimitKiB: Int, recovering: Bool = false
    ) throws(KeychainError) -> (state: FileState, index: ItemIndex, ownSlot: OwnSlotV3?, damage: [Damage]) {
        // Run A's first sector is taken before the header is opened, so that a change in between shows; run B's
        // place is known only once the header says how many pages a run has, so its first sector is taken as the
        // opening read it (the first read at each place is kept).
        let seenBefore = HeaderFingerprint(reading: file, at: [0])
        var firstReads: [Int: HeaderFingerprint.Read] = [:]
        let read = { (offset: Int, count: Int) throws(KeychainError) -> [UInt8] in
            let copy = HealingLog.readTolerating(file, count: count, at: offset)
            if firstReads[offset] == nil, count >= HeaderFingerprint.length { firstReads[offset] = copy }
            return copy.bytes
        }
        let opened: VerifiedHeaderV3
        var ownSlot: OwnSlotV3? = nil
        if let held, let again = try? VerifiedHeaderV3(read: read, logKey: held.logKey, root: held.root, scope: held.scope) {
            opened = again
        } else {
            let unlocked = try OpenedHeaderV3(read: read, credential: credential, budget: KeyDerivationBudget(memoryLimitKiB: memoryLimitKiB))
            opened = unlocked.verified
            ownSlot = OwnSlotV3(slot: unlocked.header.slots[unlocked.slotIndex], opened: unlocked.slot)
        }
        let header = opened.header
        // Every file's creation or rewrite writes at least one commit, whose heads name every group (§2.5): a header
        // naming none would let a writer holding the log key drop every group, with no head left to miss.
        guard header.rewriteHeadSequence >= 1 else {
            throw .corrupted(
                offset: 80, reason: "the header's rewrite head sequence is 0: every version 3 file's creation or rewrite writes a commit, so its records were cut away")
        }
        let keys = try RecordKeysV3(
            fileID: header.fileID, epoch: header.epoch, chainKey: opened.logKeys.chain, headsKey: opened.logKeys.heads, chainStarts: header.chainStarts)
        // A pinned open's replay remembers the tags of the pinned groups' pages (§37.5); the log keeps keys without.
        var replayKeys = keys
        if let pin { replayKeys.watchedPages = PinnedGroupsV3.pagesToWatch(pin, keys: keys) }
        let accessGroups: AccessGroupsV3
        if let table = opened.keyTable {
            accessGroups = try AccessGroupsV3(table: table, fileID: header.fileID)
            // The table names every group there is: a chain start of another key id is not this keychain's.
            for start in header.chainStarts where accessGroups.byKeyID[start.keyID] == nil {
                throw .corrupted(offset: 109, reason: "the header names where group \(start.keyID)'s chain began, a group the key table does not hold")
            }
        } else if let scope = opened.scope {
            accessGroups = try AccessGroupsV3(scope: scope, fileID: header.fileID)
        } else {
            throw .invalidParameter("internal error: a header opened with neither a key table nor a scope")
        }
        let groups = initialChains(of: accessGroups, keys: replayKeys)
        let logFile = HeaderRunShiftedFileHandle.logFile(file, pageCount: opened.pageCount)
        let log = try HealingLog(opening: logFile, headerKey: opened.logKeys.header, epoch: header.epoch, rewriteEnd: Int(header.rewriteEnd))
        var replay = ReplayV2(
            log: log, keys: .version3(replayKeys, groupNames: accessGroups.names, followsEveryGroup: !accessGroups.isScoped), start: Head(epoch: header.epoch, sequence: 0, chainValue: opened.initialChain),
            groups: groups,
            rewriteHead: Head(epoch: header.epoch, sequence: header.rewriteHeadSequence, chainValue: header.rewriteHeadChain), watching: pin)
        if recovering {
            try replay.recover()
        } else {
            try replay.run()
            try replay.checkHeads()
        }
        if let pin {
            try RecordLog.checkContains(pin, epoch: header.epoch, head: replay.outcome.head, chainAtPin: replay.watchedChain)
            // A recovering read checks the pin's record alone: its groups' chains past damage are not proven (SPEC.md §37.6).
            if !recovering { try PinnedGroupsV3.checkContains(pin, keys: keys, outcome: replay.outcome) }
        }
        // Run B as the opening read it; read now only when the opening never did (its header came from run A).
        let runB = firstReads[HeaderRunV3.runBOffset(pageCount: opened.pageCount)]
        let runsIntact = opened.runs.map { (run) -> Bool in if case .intact = run.copy { return true } else { return false } }
        let state = FileState(
            file: file, pageCount: opened.pageCount, logFile: logFile, identity: try file.identity(), header: header, headerBytes: opened.headerBytes, logKey: opened.logKey,
            root: opened.root, logKeys: opened.logKeys, keys: keys, groups: accessGroups, log: log, runsIntact: runsIntact,
            replayed: replay.outcome, size: try file.size(),
            headerSeen: seenBefore.adding(runB, orReadFrom: file, at: HeaderRunV3.runBOffset(pageCount: opened.pageCount)))
        // The replay counts in the log's bytes as version 2 lays them out; the header runs come before them here.
        let damage = replay.damage.map {
            Damage(
                offset: HeaderRunShiftedFileHandle.physical($0.offset, pageCount: opened.pageCount), itemID: $0.itemID, loss: $0.loss,
                reason: $0.reason)
        }
        return (state, replay.index, ownSlot, damage)
    }

    /// The chains of `groups` before their first page in the file: each begins at its start epoch — the header's
    /// epoch, or the epoch its chain start entry names for a group a scoped rewrite copied (§2.6).
    static func initialChains(of groups: AccessGroupsV3, keys: RecordKeysV3) -> [UInt8: GroupChainV3] {
        groups.byKeyID.mapValues { GroupChainV3(keys: $0, startEpoch: keys.startEpoch(of: $0.keyID), watching: keys.watchedPages[$0.keyID]) }
    }

    /// Whether `file` has the layout of a version 3 file. The first 16 bytes decide when they declare a version (SPEC.md
    /// §20.4): 3, or another. Only when they declare none is run A's first page asked as its parity repairs it, then
    /// whether the file has version 2's layout (its second page, or either page's parity), and only then run B at each
    /// of the sixteen places — fifteen of which lie inside a version 2 file's records, whose bytes must not override
    /// its own header.
    static func isVersion3(_ file: any KeychainFileHandle) throws(KeychainError) -> Bool {
        guard try file.size() >= 16 else { return false }
        let firstPage = HealingLog.readTolerating(file, count: HeaderPage.length, at: 0).bytes
        // The first 16 bytes as they are: a file shorter than a page reads as zeros in the tolerant read.
        let prefix = (try? HealingLog.readRetrying(file, count: 16, at: 0)) ?? Array(firstPage[0..<16])
        if FileHeaderV3.declaredLength(prefix) != nil { return true }
        if FileHeaderV2.declaredLength(prefix) != nil { return false }
        if Array(prefix[0..<8]) == Format.magic && prefix[8] == 0 && prefix[9] == UInt8(Format.version) { return false }
        if !HeaderRunV3.declaredPageCounts(firstPage: firstPage).isEmpty { return true }
        if try RecordLogV2.isVersion2(file) { return false }
        for count in 1...HeaderRunV3.maximumPages {
            let page = HealingLog.readTolerating(file, count: HeaderPage.length, at: HeaderRunV3.runBOffset(pageCount: count)).bytes
            if HeaderRunV3.declaredPageCounts(firstPage: page).contains(count) { return true }
        }
        // The magic and version 3 with a flag or length this reader refuses, and no run declaring a header: the file
        // says it is version 3, which this reader reads, so its header is damaged (SPEC.md §31.5 step 7).
        return Array(prefix[0..<8]) == Format.magic && prefix[8] == 0 && prefix[9] == 3
    }

    // MARK: Catching up with other processes (SPEC.md §16)

    /// Whether another file is at the path, or this one's size or header is not what this log last saw (a copy
    /// written over it in place changes its header: ``HeaderFingerprint``).
    func hasChanged() throws(KeychainError) -> Bool {
        if isRecoveryView { return false }
        if mustReload { return true }
        guard let current = try fileSystem.identityAndSize(of: path) else { return true }
        guard current.identity == state.identity, current.size == state.size else { return true }
        return try !state.headerSeen.matches(state.file, size: current.size)
    }

    /// Catches up: replays the commits appended after this log's end, or reads the file again from its header
    /// when another file was put at the path (it must be the same keychain at this head or later), when its
    /// commits no longer reach this log's end, or after a failed write.
    func refresh(_ index: inout ItemIndex, acknowledgement: [UInt8]?) throws(KeychainError) {
        guard !isRecoveryView else { return }
        guard let current = try fileSystem.identity(of: path) else {
            throw .io(operation: "stat (the keychain file is gone)", errno: ENOENT, path: path)
        }
        let size = try file.size()
        // A copy written over this file in place (same identity, often the same size, another epoch's header and
        // slots) is read again from its header: its slots cannot be compared with this epoch's.
        var reloading = mustReload || current != state.identity
        if !reloading { reloading = try !state.headerSeen.matches(state.file, size: size) }
        if reloading {
            try reload(&index)
            mustReload = false
            return
        }
        guard size != state.size || !state.log.slotsAsPlaced() else { return }
        let log = try HealingLog(opening: state.logFile, headerKey: state.logKeys.header, epoch: epoch, rewriteEnd: Int(state.header.rewriteEnd))
        // No commit slot of this epoch reads where this log read one: the file was rewritten in place (another epoch's
        // slots — a copy put back over it, byte for byte), and its own header says where its log is. Without the
        // slots the log would seem to end at this header's rewrite end, and a log that ends there would seem caught up.
        guard log.committedEnd >= end, log.newest != nil || state.log.newest == nil else {
            try reload(&index)
            return
        }
        var replay = ReplayV2(
            log: log, keys: .version3(state.keys, groupNames: state.groups.names, followsEveryGroup: !state.groups.isScoped), continuing: state.replayed, index: ItemIndex())
        swap(&replay.index, &index)
        var caughtUp = false
        defer {
            swap(&replay.index, &index)
            if !caughtUp { mustReload = true }
            state = FileState(
                file: state.file, pageCount: state.pageCount, logFile: state.logFile, identity: state.identity, header: state.header, headerBytes: state.headerBytes, logKey: state.logKey,
                root: state.root, logKeys: state.logKeys, keys: state.keys, groups: state.groups, log: log, runsIntact: state.runsIntact,
                replayed: replay.outcome, size: caughtUp ? size : state.size, headerSeen: state.headerSeen)
        }
        try replay.run()
        try replay.checkHeads()
        caughtUp = true
    }

    /// Opens the file now at the path with the keys this log holds, or else its credential, and replaces this log's
    /// state with it.
    func reload(_ index: inout ItemIndex) throws(KeychainError) {
        let newFile = try fileSystem.openExisting(path)
        do throws(KeychainError) {
            guard try Self.isVersion3(newFile) else {
                throw KeychainError.corrupted(offset: 8, reason: "another file, not of format version 3, was put at \(path)")
            }
            let loaded = try Self.load(
                file: newFile, credential: credential, held: state.heldKeys, pin: head,
                memoryLimitKiB: keyDerivationMemoryLimitKiB, refused: &headerRefusingCredential)
            guard loaded.state.header.fileID == fileID else {
                throw KeychainError.corrupted(offset: 16, reason: "another keychain (a different file id) was put at \(path)")
            }
            adopt(loaded.state)
            if let opened = loaded.ownSlot { ownSlot = opened }
            index = loaded.index
        } catch {
            newFile.close()
            throw error
        }
    }

    // MARK: Reading

    func decryptSecret(of item: StoredItem) throws(KeychainError) -> [UInt8] {
        try Self.openSecret(of: item, groups: state.groups)
    }

    func secretOpener() -> @Sendable (StoredItem) throws(KeychainError) -> [UInt8] {
        let groups = state.groups
        return { (item) throws(KeychainError) in try Self.openSecret(of: item, groups: groups) }
    }

    private static func openSecret(of item: StoredItem, groups: AccessGroupsV3) throws(KeychainError) -> [UInt8] {
        let bytes = Array(item.secret.box)
        return try GroupPageV3.openSecret(0..<bytes.count, of: item.id, in: bytes, keys: try groups.keys(of: item.attributes))
    }

    /// What the last read repaired and the next write will put back: header runs that do not hold the verified
    /// header, and the log chunks whose repaired bytes the records' tags confirmed.
    var repairs: RepairReport {
        let chunks = state.replayed.repairs.map { repair in
            let start = HeaderRunShiftedFileHandle.physical(HealingLayout.physical(repair.chunk * ChunkParity.dataLength), pageCount: state.pageCount)
            return RepairReport.RepairedChunk(
                chunk: repair.chunk, fileRange: start..<(start + repair.data.count), changedBytes: repair.changedOffsets.count)
        }
        return RepairReport(headerCopies: state.runsIntact.indices.filter { !state.runsIntact[$0] }, chunks: chunks)
    }

    func keySlotInfos() -> [KeySlotInfo] { state.header.slots.map { KeySlotInfo($0, names: state.groups.names) } }

    func statistics(of index: ItemIndex) -> KeychainStatistics {
        let tombstoneBytes = state.replayed.tombstones.count * EntryV2.deletionByteCount
        // A scoped holder counts the other groups' segments as live: it cannot tell their dead bytes, and a rewrite of
        // its own keeps them all (§2.6).
        let others = state.replayed.others.values.reduce(0) { $0 + $1.byteCount }
        // An estimate from version 2's entry sizes, which can come out a little above a just-compacted file's size:
        // never more live bytes than the file holds.
        let live = min(state.size, HeaderRunShiftedFileHandle.physical(
            HealingLayout.physicalEnd(ofLog: index.liveEntryBytes + tombstoneBytes + others), pageCount: state.pageCount))
        return KeychainStatistics(
            itemCount: index.count, liveBytes: live, deadBytes: max(0, state.size - live), fileSize: state.size, epoch: epoch)
    }

    /// The heads the last commit left: each followed group's chain end (group sequence 0 and the start value for a
    /// group without a page: every commit names every group).
    var currentHeads: HeadsV3 {
        get throws(KeychainError) {
            try HeadsV3(state.replayed.groups.values.sorted { $0.keys.keyID < $1.keys.keyID }.map {
                GroupHeadV3(keyID: $0.keys.keyID, startEpoch: $0.startEpoch, groupSequence: $0.sequence, lastTag: $0.lastTag)
            })
        }
    }

    /// What the next commit's heads start from (§2.6): the last commit's heads of the groups this log does not follow,
    /// as they are — a scoped writer cannot make them, and a commit without them would tell the groups' holders their
    /// pages were dropped — with the followed groups' chain ends. A full holder follows every group: its heads are
    /// ``currentHeads``.
    var headsToCarry: HeadsV3 {
        get throws(KeychainError) {
            var heads = try currentHeads
            guard state.groups.isScoped else { return heads }
            for head in state.replayed.heads?.groups ?? [] where state.replayed.groups[head.keyID] == nil {
                heads = heads.setting(head)
            }
            return heads
        }
    }

    func removeStrayTemporaryFiles() {
        RecordLog.removeStrayTemporaryFiles(besides: path, fileSystem: fileSystem)
    }
}

extension RecordLogV3: KeychainLog {}

extension RecordLogV3: HealingLogWriting {
    var healingLog: HealingLog { state.log }
    var healingLogFile: any KeychainFileHandle { state.logFile }
    var sealKey: SymmetricKey { state.logKeys.header }
    var rewriteEnd: Int { Int(state.header.rewriteEnd) }
}
