import Foundation
import Testing
@testable import KeychainFile

/// Review of format version 3's engine (helper-43), finding 1 (fixed in session 46): a keychain object that catches up
/// with another process's compaction of a version 3 file derived its credential's key again (PBKDF2 or Argon2id, the costly part
/// of opening, on purpose), where version 2 opens the new file with the key it holds (SPEC.md §16, §26.7: "opens it
/// … with the master key it holds"). Every compaction — automatic ones included — then cost every other process
/// with the file open one full key derivation on its next call.
@Suite("Review v3: catching up with a compaction derives no key")
struct V3CatchUpDerivesCredentialAgainTests {
    /// How many key derivations `body` made on this task.
    static func derivations(_ body: () throws -> Void) rethrows -> Int {
        let counter = KeyDerivationCounter()
        try counter.counting(body)
        return counter.count
    }

    @Test("Version 2 (the rule): a reader catches up with another process's compaction without deriving its credential's key")
    func versionTwoHoldsItsKey() throws {
        let directory = TemporaryDirectory()
        let writer = try V2Keychain.create(in: directory)
        _ = try V2Keychain.fill(writer, count: 5)
        let reader = try V2Keychain.open(directory.file("v2.kcf"))
        try writer.compact()
        let count = try Self.derivations { try reader.refresh() }
        #expect(count == 0)
        #expect(try liveSecrets(reader) == liveSecrets(writer))
    }

    @Test("Version 3: a reader catches up with another process's compaction without deriving its credential's key")
    func versionThreeHoldsItsKey() throws {
        let directory = TemporaryDirectory()
        let writer = try V3Keychain.create(in: directory)
        _ = try V2Keychain.fill(writer, count: 5)
        let reader = try V3Keychain.open(directory.file("v3.kcf"))
        try writer.compact()
        let count = try Self.derivations { try reader.refresh() }
        #expect(count == 0, "catching up with a compaction derived the credential's key \(count) time(s)")
        #expect(try liveSecrets(reader) == liveSecrets(writer))
    }
}

/// Review of format version 3's engine (helper-43), finding 1, second half: version 2 remembers a header its
/// credential did not open and refuses it again at once (SPEC.md §16: "MAY report `wrongCredentials` again without
/// deriving"; `RotatedAwayCredentialTests`), so that a process left behind cannot be made to spend its time
/// deriving the same refused key; version 3's catch-up derived the credential's key again on every call.
@Suite("Review v3: a header the credential does not open is tried once, not once per call")
struct V3RefusedHeaderDerivedPerCallTests {
    /// Puts at `path` another keychain of the same format, whose only credential is another password, and makes
    /// three calls through `keychain`, each of which must fail; returns the key derivations they made.
    static func derivationsAfterReplacement(_ keychain: Keychain, path: String, other: () throws -> Void) throws -> Int {
        try other()
        var count = 0
        for _ in 0..<3 {
            count += V3CatchUpDerivesCredentialAgainTests.derivations {
                #expect(throws: KeychainError.self) { try keychain.refresh() }
            }
        }
        return count
    }

    @Test("Version 2 (the rule): one derivation for three calls")
    func versionTwo() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v2.kcf")
        let keychain = try V2Keychain.create(in: directory)
        _ = try V2Keychain.fill(keychain, count: 2)
        let count = try Self.derivationsAfterReplacement(keychain, path: path) {
            let other = try Keychain.create(at: directory.file("other.kcf"), credential: .password("another"), options: V2Keychain.options)
            _ = other
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.moveItem(atPath: directory.file("other.kcf"), toPath: path)
        }
        #expect(count <= 1)
    }

    @Test("Version 3: one derivation for three calls")
    func versionThree() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        _ = try V2Keychain.fill(keychain, count: 2)
        let count = try Self.derivationsAfterReplacement(keychain, path: path) {
            let other = try Keychain.create(at: directory.file("other.kcf"), credential: .password("another"), options: V3Keychain.options)
            _ = other
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.moveItem(atPath: directory.file("other.kcf"), toPath: path)
        }
        #expect(count <= 1, "three calls derived the credential's key \(count) times")
    }
}
