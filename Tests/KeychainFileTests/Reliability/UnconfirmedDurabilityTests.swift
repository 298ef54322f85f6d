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

    @Test("fdatasync and then ftruncate fail: the add is in effect, reported as not confirmed durable, and holds after a reopen")
    func addWhoseSyncAndTruncateFail() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        _ = try TestKeychain.create(in: directory)
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
