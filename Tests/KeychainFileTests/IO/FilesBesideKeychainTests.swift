import Foundation
import Testing
@testable import KeychainFile

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files the keychain keeps beside it: the lock file `NAME.lock` is never followed through a symbolic link
/// nor taken when it is not a regular file (SPEC.md §16), and only `NAME.tmp-` with 12 lowercase hexadecimal
/// digits, a regular file, is ever removed as a stray temporary file (§15.1).
@Suite("Files beside a keychain: the lock file is not followed; only its own temporary files are removed")
struct FilesBesideKeychainTests {
    static let victimBytes = Array("a file someone else owns; nothing may write here\n".utf8)

    /// Creates `k.kcf` with one item, then removes its lock file so that a test can put something else there.
    private static func keychainWithoutLockFile(in directory: TemporaryDirectory) throws -> String {
        let path = directory.file("k.kcf")
        let keychain = try Keychain.create(at: path, credential: TestKeychain.password, options: TestKeychain.fastOptions)
        try keychain.add(GenericPassword(service: "s", account: "a", password: "p"))
        try FileManager.default.removeItem(atPath: path + ".lock")
        return path
    }

    @Test("A symbolic link planted at NAME.lock is refused, naming the lock file; its target is not written")
    func symbolicLinkAtLockPathIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = try Self.keychainWithoutLockFile(in: directory)
        let victim = directory.file("victim")
        try writeFileBytes(Self.victimBytes, to: victim)
        try FileManager.default.createSymbolicLink(atPath: path + ".lock", withDestinationPath: victim)

        do {
            let keychain = try Keychain.open(at: path, credential: TestKeychain.password)
            try keychain.add(GenericPassword(service: "s", account: "b", password: "q"))
            Issue.record("opening and writing with a symbolic link at the lock path succeeded")
        } catch {
            #expect("\(error)".contains(path + ".lock"), "\(error)")
            #expect("\(error)".contains("symbolic link"), "\(error)")
        }
        // Creating a keychain beside a planted link is refused the same way.
        let other = directory.file("other.kcf")
        try FileManager.default.createSymbolicLink(atPath: other + ".lock", withDestinationPath: victim)
        #expect(throws: KeychainError.self) {
            _ = try Keychain.create(at: other, credential: TestKeychain.password, options: TestKeychain.fastOptions)
        }
        #expect(!FileManager.default.fileExists(atPath: other))
        #expect(try fileBytes(victim) == Self.victimBytes, "the lock file's link was followed and its target written")
    }

    @Test("A lock path that is not a regular file (a FIFO, a directory) is refused with a clear error")
    func lockPathNotARegularFileIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = try Self.keychainWithoutLockFile(in: directory)
        #expect(mkfifo(path + ".lock", 0o600) == 0)
        do {
            _ = try Keychain.open(at: path, credential: TestKeychain.password)
            Issue.record("opening with a FIFO at the lock path succeeded")
        } catch {
            #expect("\(error)".contains(path + ".lock"), "\(error)")
            #expect("\(error)".contains("not a regular file"), "\(error)")
        }
        try FileManager.default.removeItem(atPath: path + ".lock")
        try FileManager.default.createDirectory(atPath: path + ".lock", withIntermediateDirectories: false)
        do {
            _ = try Keychain.open(at: path, credential: TestKeychain.password)
            Issue.record("opening with a directory at the lock path succeeded")
        } catch {
            #expect("\(error)".contains("not a regular file"), "\(error)")
        }
    }

    @Test("Opening removes NAME.tmp- and 12 lowercase hex digits, a regular file, and nothing else")
    func onlyOwnTemporaryFilesAreRemoved() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("k.kcf")
        let keychain = try Keychain.create(at: path, credential: TestKeychain.password, options: TestKeychain.fastOptions)
        try keychain.add(GenericPassword(service: "s", account: "a", password: "p"))
        let victim = directory.file("victim")
        try writeFileBytes(Self.victimBytes, to: victim)
        let kept = ["k.kcf.tmp-backup-before-upgrade", "k.kcf.tmp-ABCDEF012345", "k.kcf.tmp-0123456789ab.old",
                    "k.kcf.tmp-0123456789a", "k.kcf.tmp-0123456789abc", "k.kcf.tmp-", "k.kcf.tmp-0123456789ag"]
        for name in kept { try writeFileBytes([1, 2, 3], to: directory.file(name)) }
        // Right name, wrong kind: a directory and a symbolic link are not files a rewrite made.
        try FileManager.default.createDirectory(atPath: directory.file("k.kcf.tmp-00000000000d"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: directory.file("k.kcf.tmp-00000000000e"), withDestinationPath: victim)
        let stray = directory.file("k.kcf.tmp-0123456789ab")
        try writeFileBytes([1, 2, 3], to: stray)

        _ = try Keychain.open(at: path, credential: TestKeychain.password)
        #expect(!FileManager.default.fileExists(atPath: stray), "a genuine stray temporary file was left")
        for name in kept + ["k.kcf.tmp-00000000000d"] {
            #expect(FileManager.default.fileExists(atPath: directory.file(name)), "\(name) was removed")
        }
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: directory.file("k.kcf.tmp-00000000000e"))) == victim,
                "a symbolic link with a temporary file's name was removed")
        #expect(try fileBytes(victim) == Self.victimBytes)

        // Compaction removes strays by the same rule.
        try writeFileBytes([1, 2, 3], to: stray)
        _ = try keychain.compact()
        #expect(!FileManager.default.fileExists(atPath: stray))
        for name in kept { #expect(FileManager.default.fileExists(atPath: directory.file(name)), "\(name) was removed by compaction") }
    }
}
