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

/// A keychain file: typed items (passwords, certificates, keys) sealed in one encrypted, append-only file.
///
/// Create a keychain once, then open it with the same password or key. Every change is durable when the call
/// returns. A `Keychain` can be used from any number of threads.
///
/// For example:
/// ```swift
/// let keychain = try Keychain.create(at: "/var/lib/app/secrets.kcf", credential: .password("correct horse"))
/// try keychain.add(GenericPassword(service: "mail.example.com", account: "ann", password: "s3cret"))
/// let found = try keychain.search(.genericPassword(service: "mail.example.com", account: "ann"), returning: [.data])
/// print(String(decoding: found[0].value!, as: UTF8.self))   // "s3cret"
/// ```
public final class Keychain: @unchecked Sendable {
    // `@unchecked Sendable`: every mutable property below is read and written only while `lock` is held.
    let lock = Lock()
    /// The file: version 1's log, replaced by version 2's when the file is upgraded (`upgradeFormat()`).
    var log: any KeychainLog
    // Unchecked: Swift would otherwise record every access to this property in a per-thread table at run
    // time (about 120 instructions of a find's 12k), to trap a second access on the same thread
    // while one is open. None can happen: while an access is open only library code runs, and it does not
    // touch `index` again (see `withIndexInPlace`); user code that calls back into this keychain, from a batch
    // body or anything else, must first take `lock`, which is not recursive, and blocks there. Threads are
    // kept apart by `lock` itself (outside `init`, every access holds it).
    @exclusivity(unchecked) var index: ItemIndex
    var random: RandomSource
    let clock: @Sendable () -> Date
    /// The lock file beside the keychain (`NAME.lock`), shared between processes (SPEC.md §16).
    let lockFile: any KeychainLockHandle
    /// Why no write may hold `lockFile` — it could be opened for reading only, or there is none and none can be
    /// made (SPEC.md §16) — or `nil`.
    let lockReadOnly: ReadOnlyReason?
    /// When commits compact the file on their own.
    var autoCompactionSetting: AutoCompaction
    /// Whether rewrites keep a version 1 file at version 1 (``keepsFormatVersion``).
    var keepsFormatVersionSetting = false
    /// The back-off of automatic compactions after one failed.
    var autoCompactionRetry = AutoCompactionRetry()
    /// Set inside `withWrite` once the call begins writing to the keychain file in place (an append, a parity
    /// rewrite): a failure after that may have changed what other processes see, and is signalled to them through
    /// the lock file's change counter (SPEC.md §16); a failure before it is not.
    var writesBegun = false

    /// Options for a new keychain.
    public struct CreationOptions: Sendable {
        /// How the key of each password slot is derived from its password (SPEC.md §21.1). Default:
        /// ``PasswordKeyDerivation/standard`` — Argon2id at 64 MiB, 3 passes, 4 lanes in a file of format
        /// version 2; PBKDF2 at 600,000 rounds in one of version 1, which cannot hold Argon2id.
        public var passwordKeyDerivation: PasswordKeyDerivation
        /// The PBKDF2 cost of password slots, when they use PBKDF2; ``PasswordIterations/standard`` otherwise.
        /// Setting it chooses PBKDF2 at that cost (``passwordKeyDerivation`` becomes `.pbkdf2(newValue)`).
        public var passwordIterations: PasswordIterations {
            get {
                guard case .pbkdf2(let count) = passwordKeyDerivation.choice else { return .standard }
                return .kept(count)
            }
            set { passwordKeyDerivation = .pbkdf2(newValue) }
        }
        /// More credentials that open the keychain, each in a key slot of its own (at most 15). A keychain of format
        /// version 3 is created with one credential: add more with ``Keychain/addCredential(_:scope:keyDerivation:)``.
        public var additionalCredentials: [Credential]
        /// When commits compact the file on their own. Default: when half the file is dead.
        public var autoCompaction: AutoCompaction
        /// The format version of the new file (SPEC.md §12): 2, the default; 3 for access groups sealed under
        /// keys of their own and credentials scoped to groups (SPEC.md §30); or 1 for a file that readers of this
        /// library before version 2 must open too (its first rewrite makes it version 2). Nothing rewrites a
        /// version 2 file as version 3: a keychain is created at version 3.
        public var formatVersion: Int = Keychain.formatVersion
        /// Whether rewrites keep a file of format version 1 at version 1 (``Keychain/keepsFormatVersion``).
        /// Default: `false`.
        public var keepsFormatVersion = false

        /// For example:
        /// ```swift
        /// let options = Keychain.CreationOptions(
        ///     passwordKeyDerivation: try .argon2id(memoryKiB: 262_144, passes: 3, lanes: 4))
        /// ```
        ///
        /// - Parameters:
        ///   - passwordKeyDerivation: How password slots derive their key; Argon2id (64 MiB) in a version 2 file
        ///     by default.
        ///   - additionalCredentials: More passwords or keys that open the keychain.
        ///   - autoCompaction: When commits compact the file on their own.
        ///   - formatVersion: The new file's format version: 2 (the default), 3 or 1.
        ///   - keepsFormatVersion: Whether rewrites keep a file of format version 1 at version 1.
        public init(
            passwordKeyDerivation: PasswordKeyDerivation = .standard, additionalCredentials: [Credential] = [],
            autoCompaction: AutoCompaction = .standard, formatVersion: Int = Keychain.formatVersion,
            keepsFormatVersion: Bool = false
        ) {
            self.passwordKeyDerivation = passwordKeyDerivation
            self.additionalCredentials = additionalCredentials
            self.autoCompaction = autoCompaction
            self.formatVersion = formatVersion
            self.keepsFormatVersion = keepsFormatVersion
        }

        /// Options whose password slots use PBKDF2 at `passwordIterations`.
        ///
        /// - Parameters:
        ///   - passwordIterations: The PBKDF2 cost of password slots.
        ///   - additionalCredentials: More passwords or keys that open the keychain.
        ///   - autoCompaction: When commits compact the file on their own.
        ///   - formatVersion: The new file's format version: 2 (the default), 3 or 1.
        ///   - keepsFormatVersion: Whether rewrites keep a file of format version 1 at version 1.
        public init(
            passwordIterations: PasswordIterations, additionalCredentials: [Credential] = [],
            autoCompaction: AutoCompaction = .standard, formatVersion: Int = Keychain.formatVersion,
            keepsFormatVersion: Bool = false
        ) {
            self.init(
                passwordKeyDerivation: .pbkdf2(passwordIterations), additionalCredentials: additionalCredentials,
                autoCompaction: autoCompaction, formatVersion: formatVersion, keepsFormatVersion: keepsFormatVersion)
        }
    }

    /// Options for opening a keychain.
    public struct OpenOptions: Sendable {
        /// A head saved earlier (``Keychain/head``): opening fails with `KeychainError.rolledBack` unless the
        /// file contains it — the same epoch with that record, or a later epoch (SPEC.md §15.4); for format
        /// version 3, a later epoch in which every group the head names is still there and its chain passes through
        /// the pinned page or began anew since (``Head/groups``).
        public var expectedHead: Head?
        /// When commits compact the file on their own. Default: when half the file is dead.
        public var autoCompaction: AutoCompaction
        /// Open a damaged file for reading what still authenticates (SPEC.md §17): every item whose boxes
        /// authenticate is served, and ``Keychain/recovery`` lists what could not be read. The keychain is
        /// read-only (writes throw `invalidParameter`) and does not follow later changes to the file; a file
        /// that is not damaged opens as usual. Default: `false`, where damage fails the open.
        public var recover: Bool
        /// Whether rewrites keep a file of format version 1 at version 1, for readers of this library before
        /// version 2 (``Keychain/keepsFormatVersion``). Default: `false`, where the first rewrite makes it version 2.
        public var keepsFormatVersion = false
        /// The most memory, in bytes, that one key slot's Argon2id may ask for before opening refuses it with
        /// `KeychainError.limitReached` rather than allocate it (SPEC.md §13): the format allows 4 GiB, more than
        /// many processes may take without being killed. Default: 1 GiB (`1 << 30`).
        public var keyDerivationMemoryLimit: Int = 1 << 30
        /// Called as the records are verified, with the bytes of the log verified so far out of all of them
        /// (``OpeningProgress``): at most once for each mebibyte, and once at the end of an open that succeeds. It
        /// runs on the thread the open runs on, inside the open, and must not call back into the keychain.
        /// Default: `nil`.
        ///
        /// For example, `options.progress = { print($0) }` prints `1048576 of 5242880 bytes verified`, ….
        public var progress: (@Sendable (OpeningProgress) -> Void)?

        /// - Parameters:
        ///   - expectedHead: A head the file must contain, to detect a rollback.
        ///   - autoCompaction: When commits compact the file on their own.
        ///   - recover: Whether to open a damaged file read-only with every item that still authenticates.
        ///   - keepsFormatVersion: Whether rewrites keep a file of format version 1 at version 1.
        ///   - keyDerivationMemoryLimit: The most memory, in bytes, one key slot's Argon2id may ask for.
        ///   - progress: Called with the bytes verified so far, as the records are verified.
        public init(
            expectedHead: Head? = nil, autoCompaction: AutoCompaction = .standard, recover: Bool = false,
            keepsFormatVersion: Bool = false, keyDerivationMemoryLimit: Int = 1 << 30,
            progress: (@Sendable (OpeningProgress) -> Void)? = nil
        ) {
            self.expectedHead = expectedHead
            self.autoCompaction = autoCompaction
            self.recover = recover
            self.keepsFormatVersion = keepsFormatVersion
            self.keyDerivationMemoryLimit = keyDerivationMemoryLimit
            self.progress = progress
        }
    }

    /// What a recovering open (``OpenOptions/recover``) could not read; `nil` for a keychain opened otherwise.
    public let recovery: RecoveryReport?

    private init(
        path: String, log: any KeychainLog, index: ItemIndex, random: RandomSource, clock: @escaping @Sendable () -> Date,
        lockFile: any KeychainLockHandle, lockReadOnly: ReadOnlyReason?, autoCompaction: AutoCompaction,
        recovery: RecoveryReport? = nil
    ) {
        self.recovery = recovery
        self.path = path
        self.log = log
        self.index = index
        self.random = random
        // Whatever creating or opening drew ahead is not carried into the object's life (see RandomSource).
        random.discardPool()
        self.clock = clock
        self.lockFile = lockFile
        self.lockReadOnly = lockReadOnly
        self.autoCompactionSetting = autoCompaction
    }

    /// The lock file of the keychain file at `path`, which has no symbolic link left to resolve (SPEC.md §16).
    static func lockFilePath(for path: String) -> String { path + ".lock" }

    // MARK: Creating and opening

    /// Creates a new, empty keychain file (mode 0600) protected by `credential`.
    ///
    /// The directory's symbolic links are resolved; a symbolic link at `path` itself is not followed: creating
    /// through one is refused, as a file exists there or, if it leads nowhere, as nothing should be created
    /// where the caller did not name it (SPEC.md §10, §16).
    ///
    /// - Parameters:
    ///   - path: Where to create it. Nothing may exist there yet.
    ///   - credential: The password or 32-byte key that will open it.
    ///   - options: Creation options, such as how password slots derive their key.
    /// - Returns: The open keychain.
    /// - Throws: `KeychainError.invalidParameter` if a file or a symbolic link exists at `path` or the
    ///   credential is unusable; `.lockFileRefused` if a symbolic link or a non-regular file is at `PATH.lock`;
    ///   `.io` if the file cannot be written.
    public static func create(
        at path: String, credential: Credential, options: CreationOptions = CreationOptions()
    ) throws(KeychainError) -> Keychain {
        try create(at: path, credential: credential, options: options, random: RandomSource(SystemRandomNumberGenerator()),
                   clock: { Date() }, fileSystem: PosixFileSystem())
    }

    /// Opens a keychain file, verifying every record (SPEC.md §9).
    ///
    /// Symbolic links in `path` are resolved once, now: the keychain uses the file they lead to, and the lock
    /// file and temporary files beside that file, so that every path to one file shares one lock, and a
    /// rewrite through a link replaces the file and keeps the link (SPEC.md §16).
    ///
    /// A keychain that can only be read — a read-only mount, a file or lock file the process may not write, a
    /// directory that cannot hold a lock file, a file with more than one name (hard links) — opens and reads;
    /// every write throws `KeychainError.readOnly` saying which.
    ///
    /// - Parameters:
    ///   - path: The keychain file.
    ///   - credential: Its password or key.
    ///   - options: A head the file must contain (rollback detection) and the auto-compaction setting.
    /// - Returns: The open keychain. If the file ended with an interrupted write, ``tornTail`` says what was
    ///   ignored.
    /// - Throws: `KeychainError.wrongCredentials`, `.corrupted(offset:reason:)`, `.notAKeychain`,
    ///   `.unsupportedVersion`, `.rolledBack` if the file does not contain `options.expectedHead`,
    ///   `.lockFileRefused` if a symbolic link or a non-regular file is at the lock file's path, or `.io`.
    public static func open(
        at path: String, credential: Credential, options: OpenOptions = OpenOptions()
    ) throws(KeychainError) -> Keychain {
        try open(at: path, credential: credential, options: options, random: RandomSource(SystemRandomNumberGenerator()),
                 clock: { Date() }, fileSystem: PosixFileSystem())
    }

    static func create(
        at path: String, credential: Credential, options: CreationOptions, random: RandomSource,
        clock: @escaping @Sendable () -> Date, fileSystem: any FileSystem
    ) throws(KeychainError) -> Keychain {
        var generator = random
        let credentials = [credential] + options.additionalCredentials
        guard credentials.count <= Format.maximumSlots else { throw .invalidParameter("at most 16 credentials (key slots)") }
        guard (1...3).contains(options.formatVersion) else {
            throw .invalidParameter("format version \(options.formatVersion) is not one this library writes (1, 2 or 3)")
        }
        if options.formatVersion == 3, credentials.count > 1 {
            throw .invalidParameter("a version 3 keychain is created with one credential (more are added later)")
        }
        // Version 1 holds only PBKDF2 password slots: Argon2id asked for there is refused before anything is made.
        var version1Iterations = PasswordIterations.standard
        if options.formatVersion == 1, credentials.contains(where: { $0.slotType == .password }) {
            version1Iterations = try options.passwordKeyDerivation.version1Iterations(
                because: "this file is created at format version 1")
        }
        // The slots' limits too, before the lock file is made and before any key is derived.
        if options.formatVersion == 2 {
            try RecordLogV2.checkSlotLimits(
                works: credentials.map { RecordLogV2.slotKDF(for: $0, options.passwordKeyDerivation).work })
        }
        let file = try fileSystem.resolve(path, creating: true)
        let lockFile = try fileSystem.openLock(lockFilePath(for: file))
        _ = try lockFile.lock(exclusive: true, wait: true)
        defer { lockFile.unlock() }
        let (log, index): (any KeychainLog, ItemIndex)
        if options.formatVersion == 3 {
            (log, index) = try RecordLogV3.create(
                at: file, credential: credential, keyDerivation: options.passwordKeyDerivation, fileSystem: fileSystem, clock: clock,
                using: &generator)
        } else if options.formatVersion == 2 {
            (log, index) = try RecordLogV2.create(
                at: file, credentials: credentials, keyDerivation: options.passwordKeyDerivation, fileSystem: fileSystem,
                clock: clock, using: &generator)
        } else {
            (log, index) = try RecordLog.create(
                at: file, credentials: credentials, iterations: version1Iterations, fileSystem: fileSystem,
                using: &generator)
        }
        // A new file's acknowledgement replaces whatever a lock file left there by an earlier keychain says.
        if let acknowledgement = log.acknowledgementBytes() {
            try? lockFile.writeAcknowledgement(acknowledgement)
        } else {
            try? lockFile.withdrawAcknowledgement()
        }
        let keychain = Keychain(path: path, log: log, index: index, random: generator, clock: clock, lockFile: lockFile,
                                lockReadOnly: nil, autoCompaction: options.autoCompaction)
        keychain.keepsFormatVersionSetting = options.keepsFormatVersion
        return keychain
    }

    static func open(
        at path: String, credential: Credential, options: OpenOptions = OpenOptions(), random: RandomSource,
        clock: @escaping @Sendable () -> Date, fileSystem: any FileSystem
    ) throws(KeychainError) -> Keychain {
        try OpeningProgressReporting.with(options.progress) { () throws(KeychainError) in
            try openReplaying(at: path, credential: credential, options: options, random: random, clock: clock, fileSystem: fileSystem)
        }
    }

    /// Opens the keychain at `path`, with `options.progress` bound by the caller (``OpeningProgressReporting``).
    private static func openReplaying(
        at path: String, credential: Credential, options: OpenOptions, random: RandomSource,
        clock: @escaping @Sendable () -> Date, fileSystem: any FileSystem
    ) throws(KeychainError) -> Keychain {
        try options.expectedHead?.validateAsPin()
        let file = try fileSystem.resolve(path, creating: false)
        guard fileSystem.exists(file) else { throw .io(operation: "open", errno: ENOENT, path: path) }
        let (lockFile, lockReadOnly) = try fileSystem.openLockForExistingKeychain(lockFilePath(for: file))
        // Opened under a shared lock so that no record is half-written while it is replayed (SPEC.md §16).
        _ = try lockFile.lock(exclusive: false, wait: true)
        let handle: any KeychainFileHandle
        let isVersion2: Bool
        let isVersion3: Bool
        do {
            handle = try fileSystem.openExisting(file)
        } catch {
            lockFile.unlock()
            throw error
        }
        do {
            isVersion3 = try RecordLogV3.isVersion3(handle)
            if isVersion3 { isVersion2 = false } else { isVersion2 = try RecordLogV2.isVersion2(handle) }
        } catch {
            handle.close()
            lockFile.unlock()
            throw error
        }
        if options.recover {
            defer { lockFile.unlock() }
            if isVersion3 {
                let (log, index, damage) = try RecordLogV3.openRecovering(
                    at: file, file: handle, credential: credential, expectedHead: options.expectedHead,
                    fileSystem: fileSystem, clock: clock, keyDerivationMemoryLimitKiB: options.keyDerivationMemoryLimit / 1024)
                return Keychain(
                    path: path, log: log, index: index, random: random, clock: clock, lockFile: lockFile, lockReadOnly: lockReadOnly,
                    autoCompaction: .disabled, recovery: RecoveryReport(damage: damage))
            }
            if isVersion2 {
                let (log, index, damage) = try RecordLogV2.openRecovering(
                    at: file, file: handle, credential: credential, expectedHead: options.expectedHead,
                    fileSystem: fileSystem, clock: clock, keyDerivationMemoryLimitKiB: options.keyDerivationMemoryLimit / 1024)
                return Keychain(
                    path: path, log: log, index: index, random: random, clock: clock, lockFile: lockFile, lockReadOnly: lockReadOnly,
                    autoCompaction: .disabled, recovery: RecoveryReport(damage: damage))
            }
            handle.close()
            let (log, index, damage) = try RecordLog.openRecovering(
                at: file, credential: credential, acknowledgement: lockFile.readAcknowledgement(), pin: options.expectedHead,
                fileSystem: fileSystem)
            return Keychain(
                path: path, log: log, index: index, random: random, clock: clock, lockFile: lockFile, lockReadOnly: lockReadOnly,
                autoCompaction: .disabled, recovery: RecoveryReport(damage: damage))
        }
        let opened: (any KeychainLog, ItemIndex)
        do {
            if isVersion3 {
                opened = try RecordLogV3.open(
                    at: file, file: handle, credential: credential, expectedHead: options.expectedHead, fileSystem: fileSystem,
                    clock: clock, keyDerivationMemoryLimitKiB: options.keyDerivationMemoryLimit / 1024)
            } else if isVersion2 {
                opened = try RecordLogV2.open(
                    at: file, file: handle, credential: credential, expectedHead: options.expectedHead, fileSystem: fileSystem,
                    clock: clock, keyDerivationMemoryLimitKiB: options.keyDerivationMemoryLimit / 1024)
            } else {
                opened = try RecordLog.open(
                    at: file, file: handle, credential: credential, expectedHead: options.expectedHead,
                    acknowledgement: lockFile.readAcknowledgement(), fileSystem: fileSystem)
            }
        } catch {
            lockFile.unlock()
            throw error
        }
        lockFile.unlock()
        // Temporary files a crashed rewrite left behind go now, if no other process is writing (and this one could).
        if lockReadOnly == nil, (try? lockFile.lock(exclusive: true, wait: false)) == true {
            opened.0.removeStrayTemporaryFiles()
            lockFile.unlock()
        }
        let keychain = Keychain(path: path, log: opened.0, index: opened.1, random: random, clock: clock, lockFile: lockFile,
                                lockReadOnly: lockReadOnly, autoCompaction: options.autoCompaction)
        keychain.keepsFormatVersionSetting = options.keepsFormatVersion
        return keychain
    }

    /// Creates a keychain whose random values (keys, salts, nonces, item ids) come from `randomSource` and
    /// whose item dates come from `clock`: for reproducible test fixtures only — a seeded generator makes
    /// every key predictable.
    @_spi(Fixtures)
    public static func create(
        at path: String, credential: Credential, options: CreationOptions = CreationOptions(),
        randomSource: some RandomNumberGenerator, clock: @escaping @Sendable () -> Date
    ) throws(KeychainError) -> Keychain {
        try create(at: path, credential: credential, options: options, random: RandomSource(randomSource),
                   clock: clock, fileSystem: PosixFileSystem())
    }

    /// Opens a keychain with a given random source and clock, for fixtures (see the `create` variant).
    @_spi(Fixtures)
    public static func open(
        at path: String, credential: Credential, randomSource: some RandomNumberGenerator,
        clock: @escaping @Sendable () -> Date
    ) throws(KeychainError) -> Keychain {
        try open(at: path, credential: credential, random: RandomSource(randomSource), clock: clock,
                 fileSystem: PosixFileSystem())
    }

    // MARK: State

    /// The path the keychain was created or opened with, as given. The file it names — with every symbolic link
    /// resolved when it was opened — is where the keychain reads and writes, with its lock file and temporary
    /// files beside it (SPEC.md §16).
    public let path: String

    /// The number of live items, as of the last call that read the file.
    public var count: Int { withLock { index.count } }

    /// The newest record, as of the last call that read the file: store it where an attacker cannot write and
    /// pass it to ``open(at:credential:options:)`` later to detect a rollback (SPEC.md §13, §15.4).
    public var head: Head { withLock { log.head } }

    /// What was ignored at the end of the file (an interrupted write), or `nil`. The next write overwrites it.
    public var tornTail: TornTail? { withLock { log.tornTail } }

    /// What the last read of the file repaired from its redundancy (format version 2): header copies and log
    /// bytes, served as repaired and put back on disk by the next write. Empty when nothing was damaged.
    public var repairs: RepairReport { withLock { log.repairs } }

    /// Reads what other processes committed since this keychain last looked (every call does this itself),
    /// and looks the path up even if no process following SPEC.md §16 changed the file: a keychain file or a
    /// directory above it moved by hand is otherwise noticed within 10 ms.
    ///
    /// For example:
    /// ```swift
    /// try keychain.refresh()   // after restoring a backup over the path
    /// ```
    ///
    /// - Throws: `KeychainError.corrupted` if what they appended does not verify; `.rolledBack` if the file
    ///   was replaced by an older one; `.wrongCredentials` if another process rotated the master key and the
    ///   credential this keychain was opened with no longer opens it; `.io`.
    public func refresh() throws(KeychainError) {
        try withRead(checkingPath: true) { () throws(KeychainError) in }
    }

    // MARK: Changing items

    /// Runs several operations and commits them as one record with one fsync: all of them or none.
    ///
    /// - Parameter body: Adds, updates and deletes through the ``Batch``; throwing discards them all.
    /// - Throws: What `body` throws, or what committing throws (`.io`, `.limitReached`); nothing changed then.
    ///   `.notConfirmedDurable` when the batch took effect but its record's `fsync` failed.
    public func batch<Result>(_ body: (inout Batch) throws(KeychainError) -> Result) throws(KeychainError) -> Result {
        try withWrite { () throws(KeychainError) -> Result in
            // The batch works on the index itself, moved in, and hands it back changed or restored.
            var batch = makeBatch(movingIndex: true)
            let result: Result
            let encoded: AppendedSecrets?
            do throws(KeychainError) {
                result = try body(&batch)
                encoded = try batch.sealing { (entries, before) throws(KeychainError) in
                    writesBegun = true
                    return try log.append(entries, before: before, using: &random)
                }
            } catch {
                index = batch.finish(committed: false, written: nil)
                throw error
            }
            index = batch.finish(committed: true, written: encoded)
            if let unconfirmed = log.takeUnconfirmedDurability() { throw unconfirmed }
            if encoded != nil { compactIfDue() }
            return result
        }
    }

    /// ``batch(_:)-(_)`` for a body that throws errors of any type — what a closure written without a
    /// `throws(KeychainError)` annotation is. An error from the body discards the batch and is rethrown as is.
    ///
    /// For example:
    /// ```swift
    /// try keychain.batch { batch in
    ///     try batch.add(GenericPassword(service: "a", account: "1", password: "x"))
    ///     try batch.deleteIfPresent(.genericPassword(service: "old"))
    /// }
    /// ```
    ///
    /// - Parameter body: Adds, updates and deletes through the ``Batch``; throwing discards them all.
    /// - Throws: What `body` throws, or a `KeychainError` from committing.
    public func batch<Result>(_ body: (inout Batch) throws -> Result) throws -> Result {
        var bodyError: (any Error)? = nil
        do {
            return try batch { (batch) throws(KeychainError) -> Result in
                do {
                    return try body(&batch)
                } catch let error as KeychainError {
                    throw error
                } catch {
                    bodyError = error
                    throw KeychainError.invalidParameter("the batch's body threw \(error)")
                }
            }
        } catch {
            throw bodyError ?? error
        }
    }

    /// Adds an item.
    ///
    /// - Parameters:
    ///   - attributes: The item's class and attributes.
    ///   - secret: Its secret value.
    /// - Returns: The item's persistent reference.
    /// - Throws: `KeychainError.duplicateItem` if an item with the same primary key exists;
    ///   `.missingEntitlement` for an access group a scoped credential does not reach (``scope``).
    @discardableResult
    public func add(_ attributes: ItemAttributes, secret: [UInt8]) throws(KeychainError) -> PersistentReference {
        try batch { (batch) throws(KeychainError) in try batch.add(attributes, secret: secret) }
    }

    /// Sets attributes (and optionally the secret) on every item the query matches, as one record.
    ///
    /// - Returns: How many items changed.
    /// - Throws: `KeychainError.itemNotFound` if nothing matches; `.duplicateItem` if the change would make two
    ///   items share a primary key; `.missingEntitlement` when the query, or the access group set, is one a scoped
    ///   credential does not reach (``scope``).
    @discardableResult
    public func update(
        _ query: Query, setting changes: [Attribute: AttributeValue], secret: [UInt8]? = nil
    ) throws(KeychainError) -> Int {
        try batch { (batch) throws(KeychainError) in try batch.update(query, setting: changes, secret: secret) }
    }

    /// Deletes every item the query matches, as one record.
    ///
    /// - Returns: How many items were deleted.
    /// - Throws: `KeychainError.itemNotFound` if nothing matches; `.missingEntitlement` when the query names an
    ///   access group a scoped credential does not reach (``scope``).
    @discardableResult
    public func delete(_ query: Query) throws(KeychainError) -> Int {
        try batch { (batch) throws(KeychainError) in try batch.delete(query) }
    }

    /// Deletes every item the query matches, if any, as one record: ``delete(_:)`` for when nothing there is
    /// as good as deleted.
    ///
    /// For example:
    /// ```swift
    /// try keychain.deleteIfPresent(.genericPassword(service: "legacy.example.com"))
    /// ```
    ///
    /// - Returns: How many items were deleted; 0 if nothing matched (nothing is written then).
    /// - Throws: `KeychainError.invalidParameter` for a query that is not valid; what committing throws (`.io`,
    ///   `.readOnly`, …).
    @discardableResult
    public func deleteIfPresent(_ query: Query) throws(KeychainError) -> Int {
        try batch { (batch) throws(KeychainError) in try batch.deleteIfPresent(query) }
    }

    // MARK: Searching

    /// Finds the items a query matches, returning what `returning` asks for. Secrets are decrypted only if
    /// `.data` is asked for.
    ///
    /// - Parameters:
    ///   - query: The class, attributes to match, and match limit.
    ///   - returning: What to return; overrides `query.returning` when given.
    /// - Returns: One result (limit `.one`) or all, in the order the items were added; never empty.
    /// - Throws: `KeychainError.itemNotFound` if nothing matches — never an empty result; `.missingEntitlement`
    ///   when the query names an access group a scoped credential does not reach (``scope``): its items are
    ///   neither found nor said to be absent.
    public func search(_ query: Query, returning: ReturnOptions? = nil) throws(KeychainError) -> [SearchResult] {
        try withRead { () throws(KeychainError) -> [SearchResult] in
            try Self.checkScope(query, within: log.accessScope, operation: "finding items")
            let options = returning ?? query.returning
            var results: [SearchResult] = []
            if query.itemClass == .identity {
                for identity in try makeBatch().identities(matching: query) {
                    results.append(SearchResult(
                        itemClass: .identity, item: try result(for: identity.certificate, options),
                        privateKey: try result(for: identity.privateKey, options)))
                    if query.limit == .one { break }
                }
            } else {
                for item in try index.matching(query) {
                    results.append(SearchResult(itemClass: query.itemClass, item: try result(for: item, options), privateKey: nil))
                    if query.limit == .one { break }
                }
            }
            guard !results.isEmpty else { throw .itemNotFound }
            return results
        }
    }

    /// The secret of the item a persistent reference names.
    ///
    /// - Throws: `KeychainError.itemNotFound` if no live item has this reference.
    public func secret(for reference: PersistentReference) throws(KeychainError) -> [UInt8] {
        try withRead { () throws(KeychainError) -> [UInt8] in
            guard let item = index[reference.itemID] else { throw .itemNotFound }
            return try log.decryptSecret(of: item)
        }
    }

    // MARK: Internals

    private func result(for item: StoredItem, _ options: ReturnOptions) throws(KeychainError) -> SearchResult.Item {
        SearchResult.Item(
            persistentReference: options.contains(.persistentReference) ? PersistentReference(itemID: item.id) : nil,
            attributes: options.contains(.attributes) ? item.attributes.detached() : nil,
            value: options.contains(.data) ? try log.decryptSecret(of: item) : nil)
    }

    /// A batch over the current state. Called with the lock held. A batch that will change items takes the
    /// index itself (`movingIndex`), leaving this keychain's empty until ``Batch/finish(committed:)`` hands it
    /// back; a read-only one shares it.
    private func makeBatch(movingIndex: Bool = false) -> Batch {
        let log = self.log
        var state = ItemIndex()
        if movingIndex { swap(&state, &index) } else { state = index }
        return Batch(
            state: state, now: clock(),
            makeID: { [unowned self] in ItemID(using: &self.random) },
            decryptSecret: { (item) throws(KeychainError) -> [UInt8] in try log.decryptSecret(of: item) }, scope: log.accessScope)
    }

    /// Compacts if the auto-compaction setting asks for it, after a commit. Called inside `withWrite`.
    private func compactIfDue() {
        guard autoCompactionSetting.isDue(statisticsLocked()), autoCompactionRetry.isDue() else { return }
        // The commit is durable already: a compaction that fails leaves the old file, whole, must not make the
        // commit look failed, and is tried again after a back-off (``AutoCompactionRetry``); its error is kept
        // for ``lastAutoCompactionFailure``.
        do throws(KeychainError) {
            try compactLocked()
        } catch {
            autoCompactionRetry.failed(error)
        }
    }
}
