import Foundation
import Testing
@testable import KeychainFile

/// A change that took effect but whose durability could not be confirmed is reported as such
/// (`notConfirmedDurable`), never as a plain failure that leaves the caller believing nothing changed.
@Suite("Reliability: changes in effect without confirmed durability are reported distinctly")
struct UnconfirmedDurabilityTests {
    static func open(_ path: String, _ fileSystem: any FileSystem) throws(KeychainError) -> Keychain {
        try Keychain.open(
            at: path, credential: TestKeychain.password, options: .init(), random: RandomSource(SystemRandomNumberGenerator()),
            clock: { Date() }, fileSystem: fileSystem)
    }

    /// Version 1, whatever the default: its record is taken back by cutting the file, so a cut that fails leaves
    /// the record in effect. Version 2 takes a commit back by putting its slot back (the next test).
    @Test("fdatasync and then ftruncate fail: the add is in effect, reported as not confirmed durable, and holds after a reopen")
    func addWhoseSyncAndTruncateFail() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        _ = try TestKeychain.create(in: directory, formatVersion: 1)
        let fileSystem = FaultyFileSystem()
        let keychain = try Self.open(path, fileSystem)
        fileSystem.fail(.sync)
        fileSystem.failAlways(.truncate)
        #expect(throws: KeychainError.notConfirmedDurable(operation: "", reason: "")) {
            try keychain.setPassword("pw", forService: "s", account: "a")
        }
        fileSystem.heal()
        #expect(try keychain.password(forService: "s", account: "a") == "pw")
        #expect(try Keychain.open(at: path, credential: TestKeychain.password).password(forService: "s", account: "a") == "pw")
        // Only fdatasync failing: the record is taken back, and the add failed plainly.
        fileSystem.fail(.sync)
        #expect(throws: KeychainError.io(operation: "", errno: 0, path: "")) {
            try keychain.setPassword("pw", forService: "s", account: "b")
        }
        fileSystem.heal()
        #expect(throws: KeychainError.itemNotFound) {
            try Keychain.open(at: path, credential: TestKeychain.password).password(forService: "s", account: "b")
        }
    }

    /// A version 2 commit whose sync fails is taken back by writing the slot's old bytes back and syncing; the
    /// cut of its record is only tidying (a record past the commit end is a remnant the next writer cuts). The
    /// report must say what the file then holds: a plain failure, not a change in effect.
    @Test("Version 2: fdatasync fails and ftruncate keeps failing: the commit is taken back by its slot, the add fails plainly, and file and object agree")
    func versionTwoAddWhoseSyncFailsIsTakenBack() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        _ = try TestKeychain.create(in: directory, formatVersion: 2)
        let fileSystem = FaultyFileSystem()
        let keychain = try Self.open(path, fileSystem)
        fileSystem.fail(.sync)
        fileSystem.failAlways(.truncate)
        #expect(throws: KeychainError.io(operation: "", errno: 0, path: "")) {
            try keychain.setPassword("pw", forService: "s", account: "a")
        }
        fileSystem.heal()
        #expect(throws: KeychainError.itemNotFound) { try keychain.password(forService: "s", account: "a") }
        #expect(throws: KeychainError.itemNotFound) {
            try Keychain.open(at: path, credential: TestKeychain.password).password(forService: "s", account: "a")
        }
        try keychain.setPassword("again", forService: "s", account: "a")
        #expect(try Keychain.open(at: path, credential: TestKeychain.password).password(forService: "s", account: "a") == "again")
    }

    @Test("The directory fsync after the rename fails: the password change is reported as in effect, and it is")
    func passwordChangeWhoseDirectorySyncFails() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        _ = try TestKeychain.create(in: directory)
        let fileSystem = FaultyFileSystem()
        let keychain = try Self.open(path, fileSystem)
        fileSystem.fail(.syncDirectory)
        #expect(throws: KeychainError.notConfirmedDurable(operation: "", reason: "")) {
            try keychain.changePassword(from: "correct horse battery staple", to: "a new password")
        }
        fileSystem.heal()
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: path, credential: TestKeychain.password) }
        _ = try Keychain.open(at: path, credential: .password("a new password"))
    }

    @Test("The directory fsync after creating fails: reported as in effect, and the keychain opens")
    func createWhoseDirectorySyncFails() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("new.kcf")
        let fileSystem = FaultyFileSystem()
        fileSystem.fail(.syncDirectory)
        #expect(throws: KeychainError.notConfirmedDurable(operation: "", reason: "")) {
            _ = try Keychain.createForTesting(at: path, fileSystem: fileSystem)
        }
        _ = try Keychain.open(at: path, credential: TestKeychain.password)
    }
}
