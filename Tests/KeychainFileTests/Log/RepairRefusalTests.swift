import Foundation
import Testing
@testable import KeychainFile
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Repair refuses, for every format version, a file that no write may change (SPEC.md §15.1, §17), before anything
/// is copied: with several names (a rename over one would leave the others naming the damaged bytes), or where
/// changes are refused.
@Suite("Repair refuses files no write may change, of every format version")
struct RepairRefusalTests {
    static func keychain(version: Int, in directory: TemporaryDirectory) throws -> String {
        let keychain = try TestKeychain.create(in: directory, formatVersion: version)
        try keychain.add(GenericPassword(service: "svc", account: "kept", password: "x"))
        return directory.file("test.kcf")
    }

    @Test("A keychain file with a second hard link is refused with readOnly; neither it nor the link changes and no copy is made", arguments: [1, 2, 3])
    func hardLink(version: Int) throws {
        let directory = TemporaryDirectory()
        let path = try Self.keychain(version: version, in: directory)
        let other = directory.file("other-name.kcf")
        #expect(link(path, other) == 0)
        let bytes = try fileBytes(path)
        #expect {
            _ = try Keychain.repair(at: path, credential: TestKeychain.password, keepingCopyAt: directory.file("backup.kcf"))
        } throws: { error in
            guard case .readOnly(_, let reason) = error as? KeychainError else { return false }
            return reason.contains("link")
        }
        #expect(try fileBytes(path) == bytes && fileBytes(other) == bytes)
        #expect(!FileManager.default.fileExists(atPath: directory.file("backup.kcf")))
    }

    @Test("On a file system that refuses changes, repair is refused with readOnly and makes no copy", arguments: [1, 2, 3])
    func readOnlyFileSystem(version: Int) throws {
        let directory = TemporaryDirectory()
        let path = try Self.keychain(version: version, in: directory)
        let bytes = try fileBytes(path)
        let fileSystem = FaultyFileSystem()
        fileSystem.refuseChanges(EROFS)
        var random = SystemRandomNumberGenerator()
        #expect {
            _ = try Keychain.repair(
                at: path, credential: TestKeychain.password, keepingCopyAt: directory.file("backup.kcf"), fileSystem: fileSystem,
                using: &random)
        } throws: { error in
            if case .readOnly = error as? KeychainError { true } else { false }
        }
        #expect(try fileBytes(path) == bytes)
        #expect(!FileManager.default.fileExists(atPath: directory.file("backup.kcf")))
    }
}
