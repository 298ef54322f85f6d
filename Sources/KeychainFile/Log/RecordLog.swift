#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import KeychainCrypto

/// The keychain file on disk: the header, the verified record log, appending to it, catching up with other
/// processes and rewriting it (SPEC.md §9, §10, §15, §16).
///
/// Not thread-safe on its own, and takes no lock file: the `Keychain` that owns it serialises every call and
/// holds the lock file as SPEC.md §16 requires.
final class RecordLog {
    let path: String
    let fileSystem: any FileSystem
    /// The credential that opened the file: tried when a rewritten file no longer opens with `masterKey`
    /// (another process rotated it).
    private(set) var credential: Credential
    /// The open file and what was verified in it; replaced whole when a rewrite or a reload moves to another
    /// file.
    private var state: FileState
    /// Set when a rewrite put a new file in place but could not read its secret boxes back: the index may name
    /// boxes of the old file, so the next catch-up reloads the file whatever `stat` says.
    var mustReload = false
    /// What the last path check that found this log current saw (SPEC.md §16): the lock file's change counter,
    /// loaded just before it, and when it began. A read within ``pathCheckInterval`` of it, with the counter
    /// unchanged, needs no `stat`.
    var lastCurrent: (counter: UInt64, at: UInt64)? = nil
    /// Set for a log opened with recovery: what was read stays as it is, and nothing is written.
    var isRecoveryView = false
    /// The header of a file at the path that neither the master key held nor `credential` opened (another process
    /// rotated the master key away from it) — version 1's header bytes, or version 2's header pages when another
    /// process also upgraded the file (``RecordLogV2/openUpgraded(replacing:clock:)``): while the path holds a file
    /// with this header, catching up fails with `wrongCredentials` at once, without deriving the credential's key
    /// again (SPEC.md §16). Another header (rewritten, or an older file restored) is tried again, once.
    var headerRefusingCredential: [UInt8]? = nil
    /// Set by an append whose record is in the file but whose `fsync` failed and could not be taken back: the
    /// caller applies the change and then reports it (``takeUnconfirmedDurability()``).
    private var unconfirmedDurability: KeychainError?

    /// The open file (read by `Keychain` to check that it may be written).
    var file: any KeychainFileHandle { state.file }
    var header: FileHeader { state.header }
    var headerLength: Int { state.headerLength }
    var context: RecordContext { state.context }
    /// The master key, kept to reload a file another process rewrote and to make new key slots.
    var masterKey: SymmetricKey { state.masterKey }
    /// The end of the last verified record; appends start here.
    var end: Int { state.end }
    var head: Head { state.head }
    var tornTail: TornTail? { state.tornTail }
    /// Boxes sealed under the current record key (SPEC.md §10: at most 2³¹).
    var boxesSealed: UInt64 { state.boxesSealed }

    init(path: String, fileSystem: any FileSystem, credential: Credential, state: FileState) {
        self.path = path
        self.fileSystem = fileSystem
        self.credential = credential
        self.state = state
    }

    deinit { state.file.close() }

    /// One open, verified file: the handle, its identity (to notice when the path names another file), the
    /// header and keys of its epoch, and how far its records were verified.
    struct FileState {
        let file: any KeychainFileHandle
        let identity: FileIdentity
        let header: FileHeader
        let headerLength: Int
        let context: RecordContext
        let masterKey: SymmetricKey
        /// The epoch's header key, which also authenticates the lock file's acknowledgement (SPEC.md §16.1).
        let headerKey: SymmetricKey
        /// The header's first sector as read or written: what shows another header written over it in place.
        let headerSeen: HeaderFingerprint
        var end: Int
        var head: Head
        var tornTail: TornTail?
        var boxesSealed: UInt64
    }

    /// A verified file and the index of its items; what `open`, `reload` and `rewrite` produce.
    struct LoadedFile {
        let state: FileState
        let index: ItemIndex
    }

    /// A file `writeFile` wrote: its state, and the sealed secret of each item written, in the order of the
    /// items given.
    struct WrittenFile {
        let state: FileState
        let secrets: WrittenSecrets
    }

    func adopt(_ newState: FileState) {
        if newState.file !== state.file { state.file.close() }
        state = newState
        headerRefusingCredential = nil
    }

    // MARK: Creating

    /// Creates a new keychain file holding only a header (SPEC.md §10): written under a temporary name in the
    /// same directory, made durable, then linked into place so that an existing file is never replaced.
    static func create<Generator: RandomNumberGenerator>(
        at path: String, credentials: [Credential], iterations: PasswordIterations, fileSystem: any FileSystem,
        using generator: inout Generator
    ) throws(KeychainError) -> (RecordLog, ItemIndex) {
        guard !credentials.isEmpty else { throw .invalidParameter("a keychain needs at least one credential") }
        guard !fileSystem.exists(path) else { throw .invalidParameter("a file already exists at \(path)") }
        let masterKey = SymmetricKey(size: .bits256, using: &generator)
        let fileID = randomBytes(16, using: &generator)
        let epochSalt = randomBytes(32, using: &generator)
        let slots = try makeSlots(for: credentials, masterKey: masterKey, fileID: fileID, iterations: iterations, using: &generator)
        let state = try writeFile(
            at: path, replacing: false, fileID: fileID, epoch: 1, epochSalt: epochSalt, slots: slots, masterKey: masterKey, itemCount: 0,
            item: { _ in preconditionFailure("a new keychain has no items") },
            decryptSecret: { _ throws(KeychainError) in [] }, fileSystem: fileSystem, using: &generator)
        return (RecordLog(path: path, fileSystem: fileSystem, credential: credentials[0], state: state.state), ItemIndex())
    }

    /// Key slots wrapping `masterKey` for each credential, checking the header's limits (SPEC.md §5, §11).
    static func makeSlots<Generator: RandomNumberGenerator>(
        for credentials: [Credential], masterKey: SymmetricKey, fileID: [UInt8], iterations: PasswordIterations,
        using generator: inout Generator
    ) throws(KeychainError) -> [KeySlot] {
        for credential in credentials { try credential.validate() }
        var slots: [KeySlot] = []
        for credential in credentials {
            slots.append(try KeySlot.make(for: credential, masterKey: masterKey, fileID: fileID, iterations: iterations, using: &generator))
        }
        try checkSlotLimits(slots)
        return slots
    }

    /// The header limits on key slots: 1 to 16 slots, at most 20,000,000 PBKDF2 iterations in all.
    static func checkSlotLimits(_ slots: [KeySlot]) throws(KeychainError) {
        guard !slots.isEmpty else { throw .invalidParameter("a keychain needs at least one key slot") }
        guard slots.count <= Format.maximumSlots else { throw .limitReached("at most 16 credentials (key slots)") }
        let total = slots.reduce(UInt64(0)) { $0 + UInt64($1.iterations) }
        guard total <= Format.maximumTotalIterations else {
            throw .limitReached("the password slots would need \(total) PBKDF2 iterations together; the limit is 20,000,000")
        }
    }

    // MARK: Opening

    /// Opens, unlocks and replays a keychain file (SPEC.md §9), refusing it if it does not contain
    /// `expectedHead` (§15.4).
    static func open(
        at path: String, credential: Credential, expectedHead: Head?, acknowledgement: [UInt8]?, fileSystem: any FileSystem
    ) throws(KeychainError) -> (RecordLog, ItemIndex) {
        try credential.validate()
        return try open(
            at: path, file: try fileSystem.openExisting(path), credential: credential, expectedHead: expectedHead,
            acknowledgement: acknowledgement, fileSystem: fileSystem)
    }

    /// ``open(at:credential:expectedHead:acknowledgement:fileSystem:)`` of a file already open, which is closed if
    /// this throws.
    static func open(
        at path: String, file: any KeychainFileHandle, credential: Credential, expectedHead: Head?, acknowledgement: [UInt8]?,
        fileSystem: any FileSystem
    ) throws(KeychainError) -> (RecordLog, ItemIndex) {
        do throws(KeychainError) {
            try credential.validate()
            let (header, headerBytes, size) = try readHeader(file)
            guard let masterKey = try unlock(header, with: credential) else { throw KeychainError.wrongCredentials }
            let epoch = try OpenedEpoch(header: header, headerBytes: headerBytes, masterKey: masterKey, acknowledgement: acknowledgement)
            let state = try load(file: file, epoch: epoch, size: size, pin: expectedHead)
            return (RecordLog(path: path, fileSystem: fileSystem, credential: credential, state: state.state), state.index)
        } catch {
            file.close()
            throw error
        }
    }

    /// Reads and parses the header (SPEC.md §9.1 steps 1–2).
    static func readHeader(_ file: any KeychainFileHandle) throws(KeychainError) -> (FileHeader, [UInt8], Int) {
        let size = try file.size()
        guard size >= FileHeader.Prefix.size else { throw KeychainError.notAKeychain }
        let prefix = try FileHeader.Prefix(try file.readExactly(count: FileHeader.Prefix.size, at: 0))
        guard size >= prefix.headerLength else {
            throw KeychainError.corrupted(offset: 0, reason: "truncated header: the file has \(size) of \(prefix.headerLength) header bytes")
        }
        let headerBytes = try file.readExactly(count: prefix.headerLength, at: 0)
        return (try FileHeader.parse(headerBytes), headerBytes, size)
    }

    /// The master key from the first slot `credential` opens (§9.1 step 3), or `nil`.
    static func unlock(_ header: FileHeader, with credential: Credential) throws(KeychainError) -> SymmetricKey? {
        try slotIndex(in: header, openedBy: credential)?.masterKey
    }

    /// The first slot `credential` opens and the master key it holds, or `nil`.
    static func slotIndex(
        in header: FileHeader, openedBy credential: Credential
    ) throws(KeychainError) -> (index: Int, masterKey: SymmetricKey)? {
        for (index, slot) in header.slots.enumerated() where slot.type == credential.slotType {
            if let key = try slot.unwrap(with: credential, fileID: header.fileID) { return (index, key) }
        }
        return nil
    }

    /// Replays every record of an opened epoch (§9.1 step 5), then checks the pin.
    static func load(file: any KeychainFileHandle, epoch: OpenedEpoch, size: Int, pin: Head?) throws(KeychainError) -> LoadedFile {
        var replay = Replay(
            file: file, fileSize: size, start: epoch.headerLength, context: epoch.context, initialChain: epoch.initialChain,
            watching: epoch.watchedSequence(for: pin), acknowledged: epoch.acknowledged)
        try replay.run()
        if let pin { try checkContains(pin, epoch: epoch.header.epoch, head: replay.head, chainAtPin: replay.watchedChain) }
        let state = try epoch.fileState(file: file, end: replay.end, head: replay.head, tornTail: replay.tornTail, boxCount: replay.boxCount)
        return LoadedFile(state: state, index: replay.index)
    }

    /// Whether a file whose epoch is `epoch` and whose replay reached `head` contains `pin` (SPEC.md §15.4): a
    /// later epoch always does (only a holder of the key can write one); the same epoch does if the record
    /// at the pinned sequence has the pinned chain value.
    static func checkContains(_ pin: Head, epoch: UInt64, head: Head, chainAtPin: [UInt8]?) throws(KeychainError) {
        if epoch > pin.epoch { return }
        guard epoch == pin.epoch, let chainAtPin, chainAtPin == pin.chainValue else {
            throw .rolledBack(expected: pin, found: head)
        }
    }

    // MARK: Catching up with other processes (SPEC.md §16)

    /// How long a read may go on trusting an unchanged change counter without looking the path up: the time
    /// within which a file moved by hand (outside §16) is noticed. 10 ms, in nanoseconds (SPEC.md §16's
    /// bound; tests change it to show what the counter alone does).
    var pathCheckInterval: UInt64 = 10_000_000

    /// Whether the file changed since this log last read it: another file at the path (renamed over it, or
    /// the path itself moved), a size other than the end of the last verified record, or another header written
    /// over this one in place (``HeaderFingerprint``). One stat(2) of the path, which gives the first two, and a
    /// read of the header's first sector; reads call it unless ``isKnownCurrent(counter:now:)``. (A check of the
    /// open file alone, with fstat, could not see a directory above it renamed or the file moved away.)
    func hasChanged() throws(KeychainError) -> Bool {
        if isRecoveryView { return false }
        if mustReload { return true }
        guard let current = try fileSystem.identityAndSize(of: path) else { return true }
        guard current.identity == state.identity, current.size == end else { return true }
        return try !state.headerSeen.matches(file, size: current.size)
    }

    /// Catches up with the file (SPEC.md §16): replays records appended after `end`, or — if another file
    /// was renamed over the path (a compaction or credential change by another process) — reloads it, which
    /// must be the same keychain (file id) at this head or later. The caller holds the lock file, shared or
    /// exclusive. On a throw, `index` and this log still describe every record verified before the damage.
    ///
    /// - Parameter acknowledgement: The lock file's acknowledgement block (SPEC.md §16.1), read under the lock.
    func refresh(_ index: inout ItemIndex, acknowledgement: [UInt8]?) throws(KeychainError) {
        guard !isRecoveryView else { return }
        guard let current = try fileSystem.identity(of: path) else {
            throw .io(operation: "stat (the keychain file is gone)", errno: ENOENT, path: path)
        }
        let size = try file.size()
        // Another file at the path, this one cut below records already verified (which no writer following
        // SPEC.md §16 does), or another header written over this one in place (a copy put back with `cp`, whose
        // records this epoch's keys do not open): read it again from the start, checking that it still contains
        // this head.
        var reloading = mustReload || current != state.identity || size < end
        if !reloading { reloading = try !state.headerSeen.matches(file, size: size) }
        if reloading {
            try reload(&index, acknowledgement: acknowledgement)
            mustReload = false
            return
        }
        guard size != end else {
            state.tornTail = nil
            return
        }
        var replay = Replay(
            file: file, fileSize: size, end: end, context: context, head: head, index: ItemIndex(),
            boxCount: boxesSealed,
            acknowledged: acknowledgement.flatMap {
                Acknowledgement.read($0, fileID: header.fileID, epoch: header.epoch, headerKey: state.headerKey)
            })
        swap(&replay.index, &index)
        defer {
            // Keep whatever verified, even if a later record did not.
            swap(&replay.index, &index)
            state.end = replay.end
            state.head = replay.head
            state.boxesSealed = replay.boxCount
            state.tornTail = replay.tornTail
        }
        try replay.run()
    }

    /// Opens the file now at the path and replaces this log's state with it.
    private func reload(_ index: inout ItemIndex, acknowledgement: [UInt8]?) throws(KeychainError) {
        let newFile = try fileSystem.openExisting(path)
        do throws(KeychainError) {
            let (newHeader, headerBytes, size) = try Self.readHeader(newFile)
            guard newHeader.fileID == header.fileID else {
                throw KeychainError.corrupted(offset: 16, reason: "another keychain (a different file id) was put at \(path)")
            }
            // The master key this process holds opens a compacted file or one whose slots changed; after a
            // rotation only the credential may still open it.
            let epoch: OpenedEpoch
            if let held = try? OpenedEpoch(header: newHeader, headerBytes: headerBytes, masterKey: masterKey, acknowledgement: acknowledgement) {
                epoch = held
            } else {
                // The header the credential was found not to open, unchanged: the same answer, without the KDF.
                guard headerBytes != headerRefusingCredential else { throw KeychainError.wrongCredentials }
                guard let unlocked = try Self.unlock(newHeader, with: credential) else {
                    headerRefusingCredential = headerBytes
                    throw KeychainError.wrongCredentials
                }
                epoch = try OpenedEpoch(header: newHeader, headerBytes: headerBytes, masterKey: unlocked, acknowledgement: acknowledgement)
            }
            let state = try Self.load(file: newFile, epoch: epoch, size: size, pin: head)
            adopt(state.state)
            index = state.index
        } catch {
            newFile.close()
            throw error
        }
    }

    /// Throws unless whatever follows the last verified record is a known crash remnant, which an append may cut
    /// off and a rewrite may leave behind (SPEC.md §10, §16.1): a whole final record that may hold acknowledged
    /// data needs an explicit repair first.
    func checkTailMayBeDropped() throws(KeychainError) {
        try checkWritable()
        guard let tail = tornTail, tail.offset == end else {
            throw .corrupted(
                offset: end, reason: "bytes after the last verified record were not recognised as a crash remnant; nothing is written over them")
        }
        guard !tail.mayHoldAcknowledgedData else {
            throw .corrupted(
                offset: tail.offset,
                reason: "the final record (\(tail.byteCount) bytes) does not verify and may hold committed items, so this keychain is "
                    + "not changed until it is repaired: open it with recovery (kcf --recover) to read what still authenticates, "
                    + "salvage it, or run `kcf repair`, which keeps a copy of the file before dropping that record")
        }
    }

    /// Throws for a log opened with recovery, which must never write.
    func checkWritable() throws(KeychainError) {
        guard !isRecoveryView else {
            throw .invalidParameter(
                "this keychain was opened with recovery and is read-only: salvage it, or repair it (kcf repair), to write again")
        }
    }

    /// The acknowledgement of this log's head and end (SPEC.md §16.1), for the lock file.
    func acknowledgementBytes() -> [UInt8]? {
        Acknowledgement(fileID: header.fileID, head: head, end: end).encode(headerKey: state.headerKey)
    }

    // MARK: Appending

    /// Seals `entries` as the next record, appends it durably, and returns what was written. The caller
    /// holds the lock file exclusively, has caught up (`refresh`), validated the entries against its index,
    /// and applies them after this returns.
    func append<Entries: RandomAccessCollection<LogEntry>, Generator: RandomNumberGenerator>(
        _ entries: Entries, using generator: inout Generator
    ) throws(KeychainError) -> RecordEncoder.Encoded where Entries.Index == Int {
        try checkWritable()
        let boxes = entries.reduce(UInt64(0)) { total, entry in
            if case .put = entry { return total + 2 } else { return total + 1 }
        }
        guard boxesSealed + boxes <= Format.maximumBoxesPerEpoch else {
            throw .limitReached("2³¹ boxes have been sealed under this file's record key; compact the keychain")
        }
        // A torn tail from a crash is cut off before the new record is written over it. Only a tail replay
        // classified as a crash remnant: anything else after the last record may hold acknowledged data.
        if try file.size() != end {
            try checkTailMayBeDropped()
            try file.truncate(to: end)
        }
        var written: RecordEncoder.Encoded? = nil
        let encoded: RecordEncoder.Encoded
        do throws(KeychainError) {
            // Sealed and written piece by piece (a large batch is not held whole in memory), then made durable.
            let file = self.file
            let end = self.end
            written = try RecordEncoder.encode(
                entries, sequence: head.sequence + 1, previousChain: head.chainValue, context: context, using: &generator,
                writingTo: { (bytes, offset) throws(KeychainError) in
                    try bytes.withBytes { (raw) throws(KeychainError) in try file.writeAll(raw, at: end + offset) }
                })
            encoded = written!
            try file.sync()
        } catch {
            // Leave the file as it was: the record is cut off. If that fails too, a partial record is dropped by
            // the next open as a crash remnant (never acknowledged); a whole one stays in the file, and the next
            // open would apply it — so the change took effect, and is reported so rather than as a failure.
            do throws(KeychainError) {
                try file.truncate(to: end)
            } catch let cut {
                if let whole = written {
                    adoptAppended(whole)
                    unconfirmedDurability = .notConfirmedDurable(
                        operation: "the change", reason: "its record is in the file, but syncing it failed (\(error)) and "
                            + "taking it back failed (\(cut))")
                    return whole
                }
            }
            throw error
        }
        adoptAppended(encoded)
        return encoded
    }

    /// Moves this log past a record it appended at `end`.
    private func adoptAppended(_ encoded: RecordEncoder.Encoded) {
        state.end += encoded.frameCount
        state.head = Head(epoch: context.epoch, sequence: head.sequence + 1, chainValue: encoded.chainValue)
        state.boxesSealed += UInt64(encoded.boxCount)
        state.tornTail = nil
    }

    /// The error of the last append whose change took effect without confirmed durability, once.
    func takeUnconfirmedDurability() -> KeychainError? {
        defer { unconfirmedDurability = nil }
        return unconfirmedDurability
    }

    /// Decrypts a stored secret. Its box was verified when it was read from the file, or sealed by this
    /// process, and has been in memory since, so its tag is not checked again (``SealedSecret/decrypt(using:)``).
    func decryptSecret(_ secret: SealedSecret) throws(KeychainError) -> [UInt8] {
        try Self.decryptSecret(secret, context: context)
    }

    static func decryptSecret(_ secret: SealedSecret, context: RecordContext) throws(KeychainError) -> [UInt8] {
        do {
            return try secret.decrypt(using: context.boxKey)
        } catch {
            throw .corrupted(offset: 0, reason: "a secret held in memory has a box of \(secret.box.count) bytes: \(error)")
        }
    }

}

/// The last path component.
func baseName(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return path }
    return String(path[path.index(after: slash)...])
}

extension RecordLog {
    /// Notes that a rewrite changing the slots as `change` says succeeded: the credential kept for opening the file
    /// again follows it (``SlotChange/credential(after:)``).
    func noteSucceeded(_ change: SlotChange) {
        credential = change.credential(after: credential)
    }
}
