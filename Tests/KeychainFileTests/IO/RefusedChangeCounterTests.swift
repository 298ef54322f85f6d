import Foundation
import Testing
@testable import KeychainFile

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The lock file's change counter tells other processes that the keychain file may have changed (SPEC.md §16): a
/// call that was refused before it wrote anything — a rotating password change beside other key slots, a wrong old
/// password, a duplicate item, nothing to delete — leaves it as it was, so that no other process looks the path up
/// for nothing. A change, and a change that failed after it began writing, add one.
@Suite("A change refused before any write leaves the lock file's change counter")
struct RefusedChangeCounterTests {
    static let fast = PasswordIterations.insecureForTesting(1_000)

    @Test("Refusals before any write leave the counter, and another process makes no stat for them; a change adds one",
          arguments: [2, 1])
    func refusalsLeaveTheCounter(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        var options = TestKeychain.options(formatVersion: formatVersion)
        options.additionalCredentials = [.password("second")]
        let keychain = try Keychain.create(at: path, credential: .password("old"), options: options)
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "1"))
        // Another process, whose path checks are counted; it trusts an unchanged counter for as long as the test runs.
        let fileSystem = FaultyFileSystem()
        let other = try Keychain.openForTesting(at: path, credential: .password("second"), fileSystem: fileSystem,
                                                options: TestKeychain.versionOneOpenOptions)
        other.withLock { other.log.pathCheckInterval = .max }
        #expect(other.count == 1)
        _ = try other.search(Query.genericPassword(service: "svc"))
        func counter() throws -> UInt64 { try #require(keychain.lockFile.changeCounter) }
        let before = try counter()

        _ = expectInvalidParameter("1 other credential") {
            try keychain.changePassword(from: "old", to: "new", iterations: Self.fast)
        }
        #expect(try counter() == before, "the refused rotating change signalled a change")
        #expect(throws: KeychainError.wrongCredentials) {
            try keychain.changePasswordKeepingKeys(from: "not the password", to: "new", keyDerivation: .pbkdf2(Self.fast))
        }
        #expect(throws: KeychainError.duplicateItem) {
            _ = try keychain.add(GenericPassword(service: "svc", account: "a", password: "again"))
        }
        #expect(throws: KeychainError.itemNotFound) { _ = try keychain.delete(.genericPassword(service: "none")) }
        _ = expectInvalidParameter("empty") { try keychain.addCredential(.password(""), iterations: Self.fast) }
        #expect(try counter() == before, "a refusal before any write signalled a change")
        fileSystem.resetCounts()
        _ = try other.search(Query.genericPassword(service: "svc"))
        #expect(fileSystem.calls(of: .pathIdentity) == 0, "the other process looked the path up after refusals alone")

        // A change adds one, and the other process sees it at its next read.
        try keychain.add(GenericPassword(service: "svc", account: "b", password: "2"))
        #expect(try counter() == before &+ 1)
        #expect(try other.search(Query(.genericPassword, limit: .all)).count == 2)
        #expect(fileSystem.calls(of: .pathIdentity) >= 1, "the other process did not look the path up after a change")
    }

    @Test("A change that fails after it began writing adds one: what it left may be for other processes to see",
          arguments: [2, 1])
    func failureAfterWritingSignals(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let fileSystem = FaultyFileSystem()
        var options = TestKeychain.options(formatVersion: formatVersion)
        options.autoCompaction = .disabled
        let keychain = try Keychain.createForTesting(at: path, fileSystem: fileSystem, options: options)
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "1"))
        let before = try #require(keychain.lockFile.changeCounter)
        fileSystem.fail(.sync)
        #expect(throws: KeychainError.self) { _ = try keychain.add(GenericPassword(service: "svc", account: "b", password: "2")) }
        fileSystem.heal()
        #expect(keychain.lockFile.changeCounter == before &+ 1, "a failure after the append began did not signal")
        #expect(try Keychain.open(at: path, credential: TestKeychain.password).count == 1)
    }
}
