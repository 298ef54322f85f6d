import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Disk faults at every call of every file operation during every kind of change: the operation throws a
/// typed error, the file on disk and the keychain object's state both equal the last committed state (for a
/// rewrite whose new file was already renamed into place, that new state), and the object keeps working.
///
/// Each trial copies a template keychain into a fresh directory, opens it through a ``FaultyFileSystem``
/// armed to fail the `n`-th call of one operation, and runs one change; `n` counts up from 1 until the
/// change completes without reaching the armed call. The disk is then read by fresh keychain objects on
/// the real file system, with each of three keys. Randomness is seeded and the clock fixed, so the state a
/// change should leave is known from running it once without faults.
@Suite("Reliability: disk faults")
struct DiskFaultTests {
    static let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_767_225_600) }
    static let firstKey = reliabilityRawKey
    static let secondKey = Credential.key(SymmetricKey(data: [UInt8](repeating: 0x5A, count: 32)))
    static let thirdKey = Credential.key(SymmetricKey(data: [UInt8](repeating: 0xC3, count: 32)))
    static let keys = [firstKey, secondKey, thirdKey]

    /// One kind of change.
    enum Change: String, CaseIterable, CustomStringConvertible, Sendable {
        case add, addOverTornTail, update, delete, batch, largeBatch, addWithAutoCompaction, compact, addCredential,
             changeCredential, removeCredential, rotateMasterKey

        var description: String { rawValue }

        /// Whether the change rewrites the file (SPEC.md §15): a failure after the rename leaves the new file.
        var rewrites: Bool { ![.add, .addOverTornTail, .update, .delete, .batch, .largeBatch].contains(self) }

        /// The file the change starts from: the template, or for `addOverTornTail` the template followed by
        /// what a crash left of a record (64 zero bytes), which the append must cut off first.
        func startBytes(version: Int) throws -> [UInt8] {
            let template = try DiskFaultTests.cachedTemplate(version: version)
            return self == .addOverTornTail ? template + [UInt8](repeating: 0, count: 64) : template
        }

        func run(on keychain: Keychain) throws(KeychainError) {
            switch self {
            case .add, .addOverTornTail, .addWithAutoCompaction:
                try keychain.add(try fullAttributes(of: .internetPassword, variant: 40), secret: Array("added".utf8))
            case .update:
                try keychain.update(
                    Query(.genericPassword, attributes: [.account: fullAttributes(of: .genericPassword, variant: 1)[.account]!],
                          synchronizable: .any),
                    setting: [.label: .string("updated")], secret: Array("updated secret".utf8))
            case .delete:
                try keychain.delete(Query(.key, synchronizable: .any))
            case .batch:
                try keychain.batch { (batch) throws(KeychainError) in
                    try batch.add(try fullAttributes(of: .certificate, variant: 41), secret: [UInt8](repeating: 0x30, count: 3_000))
                    try batch.add(try fullAttributes(of: .genericPassword, variant: 42), secret: Array("batched".utf8))
                    try batch.update(Query(.internetPassword, synchronizable: .any), setting: [.comment: .string("in a batch")])
                    try batch.delete(Query(.key, synchronizable: .any))
                }
            case .largeBatch:
                // About 1.5 MB in one record: sealed and written in more than one piece (RecordEncoder.chunkSize).
                try keychain.batch { (batch) throws(KeychainError) in
                    for variant in 50..<55 {
                        try batch.add(try fullAttributes(of: .genericPassword, variant: variant),
                                      secret: [UInt8](repeating: UInt8(variant), count: 300_000))
                    }
                }
            case .compact:
                try keychain.compact()
            case .addCredential:
                try keychain.addCredential(DiskFaultTests.thirdKey)
            case .changeCredential:
                try keychain.changeCredentialKeepingKeys(from: DiskFaultTests.secondKey, to: DiskFaultTests.thirdKey)
            case .removeCredential:
                try keychain.removeCredential(DiskFaultTests.secondKey)
            case .rotateMasterKey:
                try keychain.rotateMasterKey(credentials: [DiskFaultTests.thirdKey])
            }
        }

        func openOptions(_ start: StartFormat) -> Keychain.OpenOptions {
            Keychain.OpenOptions(autoCompaction: self == .addWithAutoCompaction
                                 ? AutoCompaction(deadShare: 0, minimumFileSize: 0) : .disabled,
                                 keepsFormatVersion: start.keepsFormatVersion)
        }
        /// The epoch the change leaves, from the template's 1: a rewrite is one epoch, an upgrade of a version 1
        /// file included (the upgrade and a credential change are one rewrite).
        func epochAfter(_ start: StartFormat) -> UInt64 { rewrites ? 2 : 1 }
    }

    /// The file a trial starts from: version 2; version 1, which the first rewrite upgrades; or version 1 opened
    /// with `keepsFormatVersion`, so that version 1's own rewrites are tried.
    enum StartFormat: String, CaseIterable, CustomStringConvertible, Sendable {
        case versionTwo, versionOne, versionOneKept
        var description: String { rawValue }
        var version: Int { self == .versionTwo ? 2 : 1 }
        var keepsFormatVersion: Bool { self == .versionOneKept }
        var upgrades: Bool { self == .versionOne }
    }

    /// What the disk holds: which of the three keys open the file, its epoch (which rewrites count), and the
    /// items. Two states are equal whatever their torn tails: a torn tail holds nothing committed.
    struct DiskState: Equatable, CustomStringConvertible {
        let opens: [Bool]
        let epoch: UInt64?
        let snapshot: KeychainSnapshot?
        let tornTail: TornTail?
        let formatVersion: Int?

        static func == (lhs: DiskState, rhs: DiskState) -> Bool {
            lhs.opens == rhs.opens && lhs.epoch == rhs.epoch && lhs.snapshot == rhs.snapshot && lhs.formatVersion == rhs.formatVersion
        }

        init(path: String) throws {
            var opens: [Bool] = []
            var epoch: UInt64? = nil
            var snapshot: KeychainSnapshot? = nil
            var tornTail: TornTail? = nil
            var formatVersion: Int? = nil
            for key in DiskFaultTests.keys {
                do throws(KeychainError) {
                    let keychain = try Keychain.open(at: path, credential: key)
                    snapshot = try KeychainSnapshot(keychain)
                    epoch = keychain.head.epoch
                    tornTail = keychain.tornTail
                    formatVersion = keychain.fileFormatVersion
                    opens.append(true)
                } catch {
                    guard error == .wrongCredentials else { throw error }
                    opens.append(false)
                }
            }
            self.opens = opens
            self.epoch = epoch
            self.snapshot = snapshot
            self.tornTail = tornTail
            self.formatVersion = formatVersion
        }

        /// The credential that opens the file.
        var opener: Credential? { opens.firstIndex(of: true).map { DiskFaultTests.keys[$0] } }

        var description: String { "opens with keys \(opens), epoch \(epoch.map(String.init) ?? "-"), \(snapshot.map(String.init(describing:)) ?? "-")" }

        /// The same keys and items, whatever the epoch: an add whose automatic compaction failed after the
        /// commit leaves the new items in the old epoch.
        func sameContent(as other: DiskState) -> Bool { opens == other.opens && snapshot == other.snapshot }
    }

    /// The template: five items of four classes and a deleted one (so there is something to compact), with
    /// two raw-key slots.
    static func template(version: Int) throws -> [UInt8] {
        let directory = TemporaryDirectory()
        let path = directory.file("template.kcf")
        let keychain = try Keychain.create(
            at: path, credential: firstKey, options: creationOptions(version: version, autoCompaction: .disabled),
            random: RandomSource(TestRandom(seed: 1)), clock: clock, fileSystem: PosixFileSystem())
        try FaultTrialItems.add(to: keychain)
        return try fileBytes(path)
    }

    /// The faults tried at each operation.
    static func faults(at operation: FaultyFileSystem.Operation) -> [FaultyFileSystem.Fault] {
        switch operation {
        case .write: return [.error(EIO), .error(ENOSPC), .shortWrite(thenErrno: ENOSPC), .shortWrite(thenErrno: nil)]
        case .sync, .createExclusive, .truncate: return [.error(EIO), .error(ENOSPC)]
        default: return [.error(EIO)]
        }
    }

    /// Opens `path` through `fileSystem` with the seeded randomness and fixed clock.
    static func open(
        _ path: String, _ change: Change, _ start: StartFormat = .versionTwo, fileSystem: any FileSystem
    ) throws(KeychainError) -> Keychain {
        try Keychain.open(at: path, credential: firstKey, options: change.openOptions(start), random: RandomSource(TestRandom(seed: 2)),
                          clock: clock, fileSystem: fileSystem)
    }

    struct Tally {
        var injected = 0
        var threw = 0
        var succeeded = 0
        var diskOld = 0
        var diskNew = 0
        var lost = 0
        var perOperation: [String: Int] = [:]
    }

    /// Two raw-key slots, in a file of format version `version`.
    static func creationOptions(version: Int, autoCompaction: AutoCompaction = .standard) -> Keychain.CreationOptions {
        var options = Keychain.CreationOptions(additionalCredentials: [secondKey], autoCompaction: autoCompaction)
        options.formatVersion = version
        return options
    }

    @Test("A fault at any call of any file operation loses nothing committed, and the keychain goes on",
          arguments: Change.allCases, StartFormat.allCases)
    func faults(during change: Change, start: StartFormat) throws {
        let version = start.version
        let template = try change.startBytes(version: version)
        let before = try { () throws -> DiskState in
            let directory = TemporaryDirectory()
            try writeFileBytes(template, to: directory.file("k.kcf"))
            return try DiskState(path: directory.file("k.kcf"))
        }()
        // The state the change leaves when nothing fails.
        let after = try { () throws -> DiskState in
            let directory = TemporaryDirectory()
            let path = directory.file("k.kcf")
            try writeFileBytes(template, to: path)
            try change.run(on: try Self.open(path, change, start, fileSystem: PosixFileSystem()))
            return try DiskState(path: path)
        }()
        #expect(before != after, "\(change) changes something")
        #expect(after.epoch == change.epochAfter(start), "\(change), \(start)")
        #expect(after.formatVersion == (start.upgrades && change.rewrites ? 2 : start.version), "\(change), \(start)")
        #expect(before.snapshot?.items.count == 5)
        #expect((before.tornTail != nil) == (change == .addOverTornTail))

        var tally = Tally()
        let (_, seconds) = try measure { () throws in
            for operation in FaultyFileSystem.Operation.allCases {
                for fault in Self.faults(at: operation) {
                    var call = 1
                    while call <= 100 {
                        let fired = try trial(
                            change, fault, at: operation, call: call, start: start, before: before, after: after, tally: &tally)
                        if !fired { break }
                        tally.perOperation["\(operation)", default: 0] += 1
                        call += 1
                    }
                    #expect(call <= 100, "\(change): \(operation) was called more than 100 times")
                }
            }
        }
        #expect(tally.lost == 0)
        #expect(tally.injected > 0)
        let operations = tally.perOperation.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print("disk faults: \(change), \(start): \(tally.injected) faults injected (\(operations)); threw \(tally.threw), succeeded \(tally.succeeded) (short writes that went on, or faults after the commit); disk held the old state \(tally.diskOld) times, the new \(tally.diskNew); lost \(tally.lost); \(String(format: "%.1f", seconds)) s")
    }

    /// One trial; returns whether the armed fault fired.
    func trial(
        _ change: Change, _ fault: FaultyFileSystem.Fault, at operation: FaultyFileSystem.Operation, call: Int, start: StartFormat,
        before: DiskState, after: DiskState, tally: inout Tally
    ) throws -> Bool {
        let label = "\(change) (\(start)), \(fault) at \(operation) call \(call)"
        let directory = TemporaryDirectory()
        let path = directory.file("k.kcf")
        try writeFileBytes(try change.startBytes(version: start.version), to: path)
        let fileSystem = FaultyFileSystem()
        let keychain = try Self.open(path, change, start, fileSystem: fileSystem)
        fileSystem.inject(fault, at: operation, call: call)
        let outcome = Result { () throws(KeychainError) in try change.run(on: keychain) }
        let fired = fileSystem.fired
        fileSystem.heal()
        guard fired else {
            if case .failure(let error) = outcome { Issue.record("\(label): threw \(error) without a fault") }
            return false
        }
        tally.injected += 1
        // No temporary file is left, unless removing it was what failed (opening or compacting removes it later).
        let stray = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp-") }
        if !stray.isEmpty && operation != .removeIfPresent {
            Issue.record("\(label): temporary files left: \(stray)")
        }

        let disk = try DiskState(path: path)
        // Nothing the keychain wrote is left half-written (a torn tail), except the one the test put there.
        if disk.tornTail != nil && change != .addOverTornTail { Issue.record("\(label): the disk holds a torn tail \(disk.tornTail!)") }
        switch outcome {
        case .failure(let error):
            tally.threw += 1
            if case .shortWrite(nil) = fault { Issue.record("\(label): a short write that the next write completes failed: \(error)") }
            if disk == before {
                tally.diskOld += 1
            } else if disk == after && change.rewrites {
                tally.diskNew += 1
            } else {
                tally.lost += 1
                Issue.record("\(label): threw \(error), and the disk \(disk) is neither the old state nor the new")
            }
        case .success:
            tally.succeeded += 1
            tally.diskNew += 1
            if !(disk == after || (change == .addWithAutoCompaction && disk.sameContent(as: after))) {
                tally.lost += 1
                Issue.record("\(label): succeeded, but the disk \(disk) is not the new state \(after)")
            }
        }
        // The object's state equals the disk's, and it goes on: an add is durable.
        do throws(KeychainError) {
            #expect(try KeychainSnapshot(keychain) == disk.snapshot, "\(label): the object's state differs from the disk's")
            let reference = try keychain.add(try fullAttributes(of: .genericPassword, variant: 77), secret: Array("afterwards".utf8))
            guard let opener = disk.opener else {
                Issue.record("\(label): no key opens the file")
                return true
            }
            let reopened = try KeychainSnapshot(try Keychain.open(at: path, credential: opener))
            #expect(reopened.items.count == (disk.snapshot?.items.count ?? 0) + 1, "\(label)")
            #expect(reopened.items[reference.itemID]?.secret == Array("afterwards".utf8), "\(label)")
        } catch {
            Issue.record("\(label): the keychain object does not go on after the fault: \(error)")
        }
        return true
    }

    @Test("A fault at any call while opening leaves the file untouched; the open throws or works", arguments: [1, 2])
    func faultsWhileOpening(version: Int) throws {
        let template = try Self.cachedTemplate(version: version)
        var injected = 0
        var outcomes: [String: Int] = [:]
        for operation in FaultyFileSystem.Operation.allCases {
            for fault in Self.faults(at: operation) {
                for call in 1...100 {
                    let label = "open, \(fault) at \(operation) call \(call)"
                    let directory = TemporaryDirectory()
                    let path = directory.file("k.kcf")
                    try writeFileBytes(template, to: path)
                    let fileSystem = FaultyFileSystem()
                    fileSystem.inject(fault, at: operation, call: call)
                    let outcome = Result { () throws(KeychainError) in try Self.open(path, .add, fileSystem: fileSystem) }
                    let fired = fileSystem.fired
                    fileSystem.heal()
                    guard fired else {
                        if case .failure(let error) = outcome { Issue.record("\(label): threw \(error) without a fault") }
                        break
                    }
                    injected += 1
                    #expect(try fileBytes(path) == template, "\(label): opening changed the file")
                    let keychain: Keychain
                    switch outcome {
                    case .success(let opened):
                        outcomes["opened", default: 0] += 1
                        keychain = opened
                    case .failure(let error):
                        outcomes["threw \(error.code)", default: 0] += 1
                        keychain = try Self.open(path, .add, fileSystem: fileSystem)
                    }
                    #expect(try KeychainSnapshot(keychain) == (try DiskState(path: path)).snapshot, "\(label)")
                    let reference = try keychain.add(try fullAttributes(of: .genericPassword, variant: 77), secret: [7])
                    #expect(try Keychain.open(at: path, credential: Self.firstKey).secret(for: reference) == [7], "\(label)")
                }
            }
        }
        print("disk faults: open, format version \(version): \(injected) faults injected; \(outcomes); file unchanged every time")
    }

    @Test("A fault at any call while creating leaves no file, or a whole empty keychain", arguments: [1, 2])
    func faultsWhileCreating(version: Int) throws {
        var injected = 0
        var outcomes: [String: Int] = [:]
        for operation in FaultyFileSystem.Operation.allCases {
            for fault in Self.faults(at: operation) {
                for call in 1...100 {
                    let label = "create, \(fault) at \(operation) call \(call)"
                    let directory = TemporaryDirectory()
                    let path = directory.file("k.kcf")
                    let fileSystem = FaultyFileSystem()
                    fileSystem.inject(fault, at: operation, call: call)
                    let outcome = Result { () throws(KeychainError) in
                        try Keychain.create(
                            at: path, credential: Self.firstKey, options: Self.creationOptions(version: version),
                            random: RandomSource(TestRandom(seed: 3)), clock: Self.clock, fileSystem: fileSystem)
                    }
                    let fired = fileSystem.fired
                    fileSystem.heal()
                    guard fired else {
                        if case .failure(let error) = outcome { Issue.record("\(label): threw \(error) without a fault") }
                        break
                    }
                    injected += 1
                    let stray = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp-") }
                    if !stray.isEmpty {
                        outcomes["temporary file left", default: 0] += 1
                        if operation != .removeIfPresent { Issue.record("\(label): temporary files left: \(stray)") }
                    }
                    var keychain: Keychain
                    switch outcome {
                    case .success(let created):
                        outcomes["created", default: 0] += 1
                        keychain = created
                    case .failure(let error) where !FileManager.default.fileExists(atPath: path):
                        outcomes["threw \(error.code), no file", default: 0] += 1
                        keychain = try Keychain.create(at: path, credential: Self.firstKey, options: Self.creationOptions(version: version),
                                                       random: RandomSource(TestRandom(seed: 3)), clock: Self.clock, fileSystem: fileSystem)
                    case .failure(let error):
                        // The new file was linked into place before the failure: it must be whole and empty.
                        outcomes["threw \(error.code) after the file was in place", default: 0] += 1
                        keychain = try Keychain.open(at: path, credential: Self.firstKey)
                    }
                    let disk = try DiskState(path: path)
                    #expect(disk.opens == [true, true, false] && disk.snapshot == KeychainSnapshot(), "\(label): \(disk)")
                    let reference = try keychain.add(try fullAttributes(of: .genericPassword, variant: 77), secret: [7])
                    #expect(try Keychain.open(at: path, credential: Self.firstKey).secret(for: reference) == [7], "\(label)")
                }
            }
        }
        print("disk faults: create, format version \(version): \(injected) faults injected; \(outcomes)")
    }

    /// The template of each format version, built once per process.
    static func cachedTemplate(version: Int) throws -> [UInt8] {
        try (version == 2 ? cachedTemplateV2 : cachedTemplateV1).get()
    }
    private static let cachedTemplateV1 = Result { try template(version: 1) }
    private static let cachedTemplateV2 = Result { try template(version: 2) }
}
