import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `kcf change-password` on a keychain it cannot write — a file of mode 0400, or a directory of mode 0500 that holds
/// the keychain and its lock file, where the rewrite cannot create its new file — exits non-zero and changes
/// nothing. When the keychain also has another credential, which the rotating change refuses, the user is told
/// the one thing that is wrong first: that it is read-only (exit 195), which `--keep-keys` would not get past
/// either; once it can be written, the refusal that names `--keep-keys`; then `--keep-keys` works. Runs `kcf` as
/// the user nobody when root runs the tests, as ``ReadOnlyCommandTests`` does.
@Suite("kcf change-password on a read-only keychain: non-zero, the file unchanged, read-only said first", .serialized)
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
            #expect(result.status == 195, "\(protection) \(options): exited \(result.status): \(result.stderr)")
            #expect(result.stderr.contains("the keychain at \(path) is read-only: "), "\(protection) \(options): \(result.stderr)")
            #expect(try sandbox.keychainBytes(path) == before, "\(protection) \(options): the file changed")
        }
        let found = try Tool.kcf(["find-generic-password", "-k", path, "-a", "a", "-s", "s", "-w"], stdin: password,
                                 sandbox: sandbox, asNobody: asNobody)
        #expect(found.stdout == "kept\n", "\(protection): \(found.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["k.kcf", "k.kcf.lock"])
    }

    @Test("Read-only and another credential: read-only first (195, no --keep-keys advice); writable again, the refusal naming --keep-keys; then --keep-keys works",
          arguments: Protection.allCases)
    func readOnlyIsSaidFirst(protection: Protection) throws {
        guard let asNobody = Self.user() else { return }
        let sandbox = try KcfSandbox()
        let (directory, path) = try Tool.ownedKeychain(in: sandbox, asNobody: asNobody)
        let password = KcfSandbox.password + "\n"
        let added = try Tool.kcf(["add-credential", "--insecure-iterations", "1000", "-k", path], stdin: password + "second\n",
                                 sandbox: sandbox, asNobody: asNobody)
        #expect(added.status == 0, "add-credential: \(added.stderr)")
        let before = try sandbox.keychainBytes(path)

        // Both problems: only the keychain's password on stdin, as the answer must come before the new one is asked.
        Self.protect(protection, directory: directory, path: path, on: true)
        let readOnly = try Tool.kcf(["change-password", "--insecure-iterations", "1000", "-k", path], stdin: password,
                                    sandbox: sandbox, asNobody: asNobody)
        #expect(readOnly.status == 195, "\(protection): exited \(readOnly.status): \(readOnly.stderr)")
        #expect(readOnly.stderr.contains("is read-only"), "\(protection): \(readOnly.stderr)")
        #expect(!readOnly.stderr.contains("--keep-keys"), "\(protection): advice that cannot work: \(readOnly.stderr)")
        let keptReadOnly = try Tool.kcf(["change-password", "--keep-keys", "--insecure-iterations", "1000", "-k", path], stdin: password,
                                        sandbox: sandbox, asNobody: asNobody)
        #expect(keptReadOnly.status == 195, "\(protection) --keep-keys: exited \(keptReadOnly.status): \(keptReadOnly.stderr)")
        #expect(try sandbox.keychainBytes(path) == before, "\(protection): the file changed")

        // Writable again: the other credential is the one problem left.
        Self.protect(protection, directory: directory, path: path, on: false)
        let refused = try Tool.kcf(["change-password", "--insecure-iterations", "1000", "-k", path], stdin: password,
                                   sandbox: sandbox, asNobody: asNobody)
        #expect(refused.status == 1, "\(protection): exited \(refused.status): \(refused.stderr)")
        #expect(refused.stderr.contains("1 other credential") && refused.stderr.contains("--keep-keys"), "\(refused.stderr)")
        #expect(try sandbox.keychainBytes(path) == before, "\(protection): the refusal changed the file")
        let kept = try Tool.kcf(["change-password", "--keep-keys", "--insecure-iterations", "1000", "-k", path],
                                stdin: password + "a new password\n", sandbox: sandbox, asNobody: asNobody)
        #expect(kept.status == 0, "\(protection) --keep-keys: \(kept.stderr)")
        for newOrSecond in ["a new password", "second"] {
            let found = try Tool.kcf(["find-generic-password", "-k", path, "-a", "a", "-s", "s", "-w"], stdin: newOrSecond + "\n",
                                     sandbox: sandbox, asNobody: asNobody)
            #expect(found.stdout == "kept\n", "\(protection), \(newOrSecond): \(found.stderr)")
        }
    }
}
