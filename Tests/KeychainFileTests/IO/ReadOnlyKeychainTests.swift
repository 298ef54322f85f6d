import Foundation
import Testing
@testable import KeychainFile

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A keychain that can be read but not written (SPEC.md §16): its file system is mounted read-only (EROFS),
/// or the process may not write its file, lock file or directory (EACCES). It opens and reads; every write
/// fails with `KeychainError.readOnly`, naming the path and why, and changes nothing. The file system refuses
/// through ``FaultyFileSystem/refuseChanges(_:)``; Tests/KcfCommandLineTests/ReadOnlyCommandTests.swift does
/// the same with `kcf` on a real read-only mount, file and directory.
@Suite("Read-only keychains: they open and read; writes fail with readOnly and change nothing")
struct ReadOnlyKeychainTests {
    /// A keychain at `k.kcf` holding two items, and its bytes.
    private static func makeKeychain(in directory: TemporaryDirectory, keepingLockFile: Bool) throws -> (path: String, bytes: [UInt8]) {
        let path = directory.file("k.kcf")
        let keychain = try Keychain.create(at: path, credential: TestKeychain.password, options: TestKeychain.fastOptions)
        try keychain.add(GenericPassword(service: "s", account: "a", password: "one"))
        try keychain.add(GenericPassword(service: "s", account: "b", password: "two"))
        if !keepingLockFile { try FileManager.default.removeItem(atPath: path + ".lock") }
        return (path, try fileBytes(path))
    }

    /// Every kind of write, by name.
    static let writes: [(String, @Sendable (Keychain) throws(KeychainError) -> Void)] = [
        ("add", { (keychain) throws(KeychainError) in try keychain.add(GenericPassword(service: "s", account: "c", password: "three")) }),
        ("update", { (keychain) throws(KeychainError) in
            _ = try keychain.update(.genericPassword(service: "s", account: "a"), setting: [:], secret: Array("new".utf8)) }),
        ("delete", { (keychain) throws(KeychainError) in _ = try keychain.delete(.genericPassword(service: "s", account: "a")) }),
        ("compact", { (keychain) throws(KeychainError) in _ = try keychain.compact() }),
        ("changeCredential", { (keychain) throws(KeychainError) in
            try keychain.changeCredential(from: TestKeychain.password, to: .password("another"), iterations: .insecureForTesting(1_000)) }),
    ]

    /// Checks that `keychain` reads both items and refuses every write with `readOnly`, naming `path` and, in
    /// its reason, `because`.
    private static func expectReadOnly(_ keychain: Keychain, at path: String, because: String,
                                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        let found = try keychain.find(GenericPassword.self, matching: .genericPassword(service: "s"))
        #expect(found.map(\.value) == [Array("one".utf8), Array("two".utf8)], sourceLocation: sourceLocation)
        for (label, write) in Self.writes {
            do throws(KeychainError) {
                try write(keychain)
                Issue.record("\(label) succeeded on a read-only keychain", sourceLocation: sourceLocation)
            } catch {
                #expect(error.code == -61, "\(label): \(error)", sourceLocation: sourceLocation)
                #expect("\(error)".hasPrefix("the keychain at \(path) is read-only: "), "\(label): \(error)", sourceLocation: sourceLocation)
                #expect("\(error)".contains(because), "\(label): \(error)", sourceLocation: sourceLocation)
            }
        }
        // And it still reads.
        #expect(try keychain.find(GenericPassword.self, matching: .genericPassword(service: "s")).count == 2, sourceLocation: sourceLocation)
    }

    @Test("On a read-only file system without a lock file the keychain opens and reads without one; writes fail with readOnly")
    func readOnlyMountWithoutLockFile() throws {
        let directory = TemporaryDirectory()
        let (path, bytes) = try Self.makeKeychain(in: directory, keepingLockFile: false)
        let fileSystem = FaultyFileSystem()
        fileSystem.refuseChanges(EROFS)
        let keychain = try Keychain.openForTesting(at: path, fileSystem: fileSystem)
        try Self.expectReadOnly(keychain, at: path, because: "lock file")
        #expect(try fileBytes(path) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["k.kcf"])
    }

    @Test("On a read-only file system with a lock file the keychain opens it for reading; writes fail with readOnly")
    func readOnlyMountWithLockFile() throws {
        let directory = TemporaryDirectory()
        let (path, bytes) = try Self.makeKeychain(in: directory, keepingLockFile: true)
        let lockBytes = try fileBytes(path + ".lock")
        let fileSystem = FaultyFileSystem()
        fileSystem.refuseChanges(EROFS)
        let keychain = try Keychain.openForTesting(at: path, fileSystem: fileSystem)
        try Self.expectReadOnly(keychain, at: path, because: "EROFS")
        #expect(try fileBytes(path) == bytes)
        #expect(try fileBytes(path + ".lock") == lockBytes)
    }

    @Test("A lock file that cannot be opened for writing (EACCES) is still a lock: a reader waits for a writer and follows its commits")
    func readOnlyLockFileStillLocks() throws {
        let directory = TemporaryDirectory()
        let (path, _) = try Self.makeKeychain(in: directory, keepingLockFile: true)
        let fileSystem = FaultyFileSystem()
        fileSystem.refuseChanges(EACCES)
        let reader = try Keychain.openForTesting(at: path, fileSystem: fileSystem)
        try Self.expectReadOnly(reader, at: path, because: "EACCES")

        // The owner, who may write, commits; the reader follows. Then, while the owner holds the lock file in a
        // batch, a reader that must catch up waits for it.
        let writer = try Keychain.open(at: path, credential: TestKeychain.password)
        try writer.add(GenericPassword(service: "t", account: "x", password: "1"))
        let done = DispatchSemaphore(value: 0)
        var finishedInside = false
        try writer.batch { (batch) throws(KeychainError) in
            try batch.add(GenericPassword(service: "t", account: "y", password: "2"))
            Thread {
                _ = try? reader.refresh()
                done.signal()
            }.start()
            finishedInside = done.wait(timeout: .now() + 0.3) == .success
        }
        if !finishedInside { done.wait() }
        #expect(!finishedInside, "the reader caught up while the writer held the lock file exclusively")
        #expect(try reader.find(GenericPassword.self, matching: .genericPassword(service: "t")).map(\.account) == ["x", "y"])
    }

    @Test("A keychain file that cannot be opened for writing (EACCES) is opened for reading; writes fail with readOnly")
    func fileNotWritable() throws {
        let directory = TemporaryDirectory()
        let (path, bytes) = try Self.makeKeychain(in: directory, keepingLockFile: true)
        let fileSystem = FaultyFileSystem()
        // The first open of the keychain file for writing is refused, as for a file of mode 0400; its lock file
        // and its directory are writable.
        fileSystem.fail(.openExisting, call: 1, errno: EACCES)
        let keychain = try Keychain.openForTesting(at: path, fileSystem: fileSystem)
        #expect(fileSystem.fired)
        try Self.expectReadOnly(keychain, at: path, because: "cannot be opened for writing")
        #expect(try fileBytes(path) == bytes)
    }
}
