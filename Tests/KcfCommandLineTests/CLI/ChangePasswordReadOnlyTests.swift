import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `kcf change-password` on a keychain it cannot write — a file of mode 0400, or a directory of mode 0500 that holds
/// the keychain and its lock file, where the rewrite cannot create its new file — exits non-zero and changes
/// nothing. Runs `kcf` as the user nobody when root runs the tests, as ``ReadOnlyCommandTests`` does.
@Suite("kcf change-password on a read-only keychain: non-zero, the file unchanged", .serialized)
struct ChangePasswordReadOnlyTests {
    typealias Tool = ReadOnlyCommandTests

    /// How the keychain is made read-only, and undone.
    enum Protection: String, CaseIterable, CustomStringConvertible, Sendable {
        case fileMode0400, directoryMode0500WithLockFile
        var description: String { rawValue }
    }

    static func protect(_ protection: Protection, directory: String, path: String, on: Bool) {
        switch protection {
        case .fileMode0400: #expect(chmod(path, on ? 0o400 : 0o600) == 0)
        case .directoryMode0500WithLockFile: #expect(chmod(directory, on ? 0o500 : 0o700) == 0)
        }
    }

    /// The exercising user, or nil after recording why the permission cases cannot run here.
    static func user() -> Bool? {
        let (asNobody, unavailable) = Tool.otherUser
        if let unavailable {
            withKnownIssue("NOT EXERCISED on this machine: \(unavailable)") { Issue.record("not exercised: \(unavailable)") }
            return nil
        }
        return asNobody
    }

    @Test("change-password, with and without --keep-keys, on a read-only keychain with one password: non-zero, the file unchanged",
          arguments: Protection.allCases)
    func readOnlyChangesNothing(protection: Protection) throws {
        guard let asNobody = Self.user() else { return }
        let sandbox = try KcfSandbox()
        let (directory, path) = try Tool.ownedKeychain(in: sandbox, asNobody: asNobody)
        #expect(FileManager.default.fileExists(atPath: path + ".lock"))
        Self.protect(protection, directory: directory, path: path, on: true)
        defer { Self.protect(protection, directory: directory, path: path, on: false) }
        let before = try sandbox.keychainBytes(path)
        let password = KcfSandbox.password + "\n"
        for options in [[], ["--keep-keys"]] {
            let result = try Tool.kcf(["change-password", "--insecure-iterations", "1000", "-k", path] + options,
                                      stdin: password + "a new password\n", sandbox: sandbox, asNobody: asNobody)
            #expect(result.status != 0, "\(protection) \(options): exited 0: \(result.stderr)")
            #expect(try sandbox.keychainBytes(path) == before, "\(protection) \(options): the file changed")
        }
        let found = try Tool.kcf(["find-generic-password", "-k", path, "-a", "a", "-s", "s", "-w"], stdin: password,
                                 sandbox: sandbox, asNobody: asNobody)
        #expect(found.stdout == "kept\n", "\(protection): \(found.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["k.kcf", "k.kcf.lock"])
    }
}
