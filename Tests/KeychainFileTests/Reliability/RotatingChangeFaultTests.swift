import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The rotating password change (`changePassword`: a new master key, every item sealed anew, SPEC.md §15.2) failing
/// or crashing at every call of every file operation it makes, on a version 2 file, on a version 1 file kept at
/// version 1, and on a version 1 file the change upgrades to version 2.
///
/// Each trial copies a template keychain (one password slot, five items of four classes) into a fresh directory,
/// opens it through a ``FaultyFileSystem`` armed at the `n`-th call of one operation, and changes the password;
/// `n` counts up from 1 until the change completes without reaching the armed call. The faults are those of
/// ``DiskFaultTests`` (EIO everywhere, ENOSPC, short writes) and a crash (``FaultyFileSystem/Fault/crash``: the
/// call and every later one have no effect, as when the process is killed there). The file is then opened by fresh
/// keychains on the real file system with the old password and with the new one. Exactly one must open it: the
/// old one with every item as before and the old master key, and then the call must have thrown; or the new one
/// with every item as before under a new master key, and then the call succeeded or threw `notConfirmedDurable`
/// (the change took effect). Never neither, never fewer items, never an empty keychain.
@Suite("Reliability: the rotating password change under disk faults and crashes")
struct RotatingChangeFaultTests {
    static let oldPassword = "the old password"
    static let newPassword = "the new password"
    static let fast = PasswordIterations.insecureForTesting(1_000)

    /// The file a trial starts from.
    enum StartFormat: String, CaseIterable, CustomStringConvertible, Sendable {
        case versionTwo, versionOneKept, versionOneUpgraded
        var description: String { rawValue }
        var version: Int { self == .versionTwo ? 2 : 1 }
        /// The format version of the file after the change.
        var versionAfter: Int { self == .versionOneKept ? 1 : 2 }
        var openOptions: Keychain.OpenOptions {
            Keychain.OpenOptions(autoCompaction: .disabled, keepsFormatVersion: self == .versionOneKept)
        }
    }

    /// What a fresh open of the file with one password finds.
    struct Opened: Equatable {
        let snapshot: KeychainSnapshot
        let masterKey: SymmetricKey
        let epoch: UInt64
        let formatVersion: Int
    }

    /// The file opened with `password`, or `nil` for `wrongCredentials`; any other error is thrown.
    static func open(_ path: String, password: String) throws -> Opened? {
        do throws(KeychainError) {
            let keychain = try Keychain.open(at: path, credential: .password(password))
            return Opened(
                snapshot: try KeychainSnapshot(keychain), masterKey: keychain.log.masterKey, epoch: keychain.head.epoch,
                formatVersion: keychain.fileFormatVersion)
        } catch {
            guard error == .wrongCredentials else { throw error }
            return nil
        }
    }

    /// Five items of four classes, and a deleted one, under one password slot (fast PBKDF2).
    static func template(version: Int) throws -> [UInt8] {
        let directory = TemporaryDirectory()
        let path = directory.file("template.kcf")
        var options = TestKeychain.options(formatVersion: version)
        options.autoCompaction = .disabled
        let keychain = try Keychain.create(at: path, credential: .password(oldPassword), options: options)
        try FaultTrialItems.add(to: keychain)
        return try fileBytes(path)
    }

    private static let templateV1 = Result { try template(version: 1) }
    private static let templateV2 = Result { try template(version: 2) }
    static func cachedTemplate(version: Int) throws -> [UInt8] { try (version == 2 ? templateV2 : templateV1).get() }

    /// The faults tried at each operation: ``DiskFaultTests``'s, and a crash.
    static func faults(at operation: FaultyFileSystem.Operation) -> [FaultyFileSystem.Fault] {
        DiskFaultTests.faults(at: operation) + [.crash]
    }

    struct Tally {
        var injected = 0
        var crashes = 0
        var threw = 0
        var succeeded = 0
        var oldOpens = 0
        var newOpens = 0
        var lost = 0
    }

    @Test("A fault or crash at any call of the rotating change leaves the old password and keys, or the new ones, every item kept",
          arguments: StartFormat.allCases)
    func faults(start: StartFormat) throws {
        let template = try Self.cachedTemplate(version: start.version)
        let before = try { () throws -> Opened in
            let directory = TemporaryDirectory()
            try writeFileBytes(template, to: directory.file("k.kcf"))
            return try #require(try Self.open(directory.file("k.kcf"), password: Self.oldPassword))
        }()
        #expect(before.snapshot.items.count == 5)
        #expect(before.formatVersion == start.version)
        var tally = Tally()
        let (_, seconds) = try measure { () throws in
            for operation in FaultyFileSystem.Operation.allCases {
                for fault in Self.faults(at: operation) {
                    var call = 1
                    while call <= 200 {
                        guard try trial(fault, at: operation, call: call, start: start, before: before, tally: &tally) else { break }
                        call += 1
                    }
                    #expect(call <= 200, "\(operation) was called more than 200 times")
                }
            }
        }
        #expect(tally.lost == 0)
        #expect(tally.oldOpens > 0 && tally.newOpens > 0, "faults before and after the rename were both tried")
        print("rotating change faults, \(start): \(tally.injected) faults injected (\(tally.crashes) crashes); threw \(tally.threw), succeeded \(tally.succeeded); the old password opened the file \(tally.oldOpens) times, the new \(tally.newOpens); lost \(tally.lost); \(String(format: "%.1f", seconds)) s")
    }

    /// One trial; returns whether the armed fault fired.
    func trial(
        _ fault: FaultyFileSystem.Fault, at operation: FaultyFileSystem.Operation, call: Int, start: StartFormat, before: Opened,
        tally: inout Tally
    ) throws -> Bool {
        let label = "\(start): \(fault) at \(operation) call \(call)"
        let directory = TemporaryDirectory()
        let path = directory.file("k.kcf")
        try writeFileBytes(try Self.cachedTemplate(version: start.version), to: path)
        let fileSystem = FaultyFileSystem()
        let keychain = try Keychain.openForTesting(
            at: path, credential: .password(Self.oldPassword), fileSystem: fileSystem, options: start.openOptions)
        fileSystem.inject(fault, at: operation, call: call)
        let outcome = Result { () throws(KeychainError) in
            try keychain.changePassword(from: Self.oldPassword, to: Self.newPassword, iterations: Self.fast)
        }
        let fired = fileSystem.fired
        fileSystem.heal()
        guard fired else {
            if case .failure(let error) = outcome { Issue.record("\(label): threw \(error) without a fault") }
            return false
        }
        tally.injected += 1
        let crashed: Bool
        if case .crash = fault { crashed = true } else { crashed = false }
        if crashed { tally.crashes += 1 }
        if case .failure = outcome { tally.threw += 1 } else { tally.succeeded += 1 }

        // A fresh open with each password (which also removes what a crash left of a temporary file).
        let old: Opened?, new: Opened?
        do {
            old = try Self.open(path, password: Self.oldPassword)
            new = try Self.open(path, password: Self.newPassword)
        } catch {
            tally.lost += 1
            Issue.record("\(label): the file does not open: \(error) (the change \(outcome))")
            return true
        }
        switch (old, new) {
        case (let old?, nil):
            tally.oldOpens += 1
            if old != before {
                tally.lost += 1
                Issue.record("\(label): the old password opens \(old.snapshot), epoch \(old.epoch), not the file as it was (\(before.snapshot))")
            }
            if case .success = outcome {
                tally.lost += 1
                Issue.record("\(label): the change returned, but the file still opens with the old password only")
            }
        case (nil, let new?):
            tally.newOpens += 1
            if new.snapshot != before.snapshot {
                tally.lost += 1
                Issue.record("\(label): the new password opens \(new.snapshot), not every item as before (\(before.snapshot))")
            }
            #expect(new.masterKey != before.masterKey, "\(label): the new password opens the old master key")
            #expect(new.formatVersion == start.versionAfter && new.epoch == before.epoch + 1, "\(label)")
            if case .failure(let error) = outcome, error != .notConfirmedDurable(operation: "", reason: "") {
                Issue.record("\(label): the change took effect but threw \(error), not notConfirmedDurable")
            }
        case (nil, nil):
            tally.lost += 1
            Issue.record("\(label): neither password opens the file (\(outcome))")
        case (.some, .some):
            tally.lost += 1
            Issue.record("\(label): both passwords open the file")
        }
        let stray = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp-") }
        if !stray.isEmpty { Issue.record("\(label): temporary files left after an open: \(stray)") }

        // The keychain object, unless its process died, goes on where the disk is: its items, and a durable add.
        guard !crashed else { return true }
        do throws(KeychainError) {
            #expect(try KeychainSnapshot(keychain) == before.snapshot, "\(label): the object's items differ from the disk's")
            try keychain.add(GenericPassword(service: "after", account: "the fault", password: "afterwards"))
            let password = new != nil ? Self.newPassword : Self.oldPassword
            let reopened = try Keychain.open(at: path, credential: .password(password))
            #expect(try reopened.password(forService: "after", account: "the fault") == "afterwards", "\(label)")
            #expect(reopened.count == before.snapshot.items.count + 1, "\(label)")
        } catch {
            Issue.record("\(label): the keychain object does not go on after the fault: \(error)")
        }
        return true
    }
}
