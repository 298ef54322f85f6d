import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `delete-keychain`: deletes a named keychain and its lock file; refuses what is missing, not a keychain, a
/// symbolic link, or in a directory it cannot write, deleting nothing.
@Suite("kcf delete-keychain", .serialized)
struct DeleteKeychainTests {
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    @Test("deletes the keychain and its lock file; the keychain is then gone for every command")
    func deletes() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "a", service: "s", secret: "x")
        #expect(Self.exists(sandbox.keychain + ".lock"))
        let result = try sandbox.run(["delete-keychain", sandbox.keychain])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "deleted keychain \"\(sandbox.keychain)\" and its lock file\n")
        #expect(!Self.exists(sandbox.keychain) && !Self.exists(sandbox.keychain + ".lock"))
        #expect(try sandbox.unlocked(["verify"]).status == 220)
        let again = try sandbox.run(["delete-keychain", sandbox.keychain])
        #expect(again.status == 220)
        #expect(again.stderr.contains("no keychain at"))
    }

    @Test("the keychain must be named: KCF_KEYCHAIN or -k do, the per-user default alone does not")
    func mustBeNamed() throws {
        let sandbox = try KcfSandbox()
        sandbox.environment["KCF_KEYCHAIN"] = nil
        let created = try sandbox.run(["create-keychain", "--insecure-iterations", "1000"], stdin: KcfSandbox.password + "\n")
        #expect(created.status == 0)
        let defaultPath = sandbox.file("data/kcf/default.kcf")
        let unnamed = try sandbox.run(["delete-keychain"])
        #expect(unnamed.status == 2)
        #expect(Self.exists(defaultPath))
        #expect(try sandbox.run(["delete-keychain"], extra: ["KCF_KEYCHAIN": defaultPath]).status == 0)
        #expect(!Self.exists(defaultPath))
    }

    @Test("a file that is not a keychain (93), a directory and a symbolic link (206) are not deleted")
    func refusals() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let text = sandbox.file("notes.kcf")
        try Data("not a keychain\n".utf8).write(to: URL(fileURLWithPath: text))
        let notKeychain = try sandbox.run(["delete-keychain", text])
        #expect(notKeychain.status == 93)
        #expect(Self.exists(text))
        let short = sandbox.file("short.kcf")
        try Data([0x89, 0x4B, 0x43]).write(to: URL(fileURLWithPath: short))
        #expect(try sandbox.run(["delete-keychain", short]).status == 93)

        let directory = sandbox.file("dir.kcf")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        #expect(try sandbox.run(["delete-keychain", directory]).status == 206)
        #expect(Self.exists(directory))

        let link = sandbox.file("link.kcf")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: sandbox.keychain)
        let viaLink = try sandbox.run(["delete-keychain", link])
        #expect(viaLink.status == 206)
        #expect(viaLink.stderr.contains("\(link) is a symbolic link to \(sandbox.keychain)"))
        #expect(Self.exists(link) && Self.exists(sandbox.keychain))
        #expect(try sandbox.unlocked(["verify"]).status == 0, "the keychain is untouched")
        let dangling = sandbox.file("dangling.kcf")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: sandbox.file("nowhere.kcf"))
        #expect(try sandbox.run(["delete-keychain", dangling]).status == 206)
        #expect(Self.exists(dangling))
    }

    @Test("in a directory it cannot write, delete-keychain exits 195 and deletes neither file")
    func readOnlyDirectory() throws {
        let sandbox = try KcfSandbox()
        let directory = sandbox.file("ro")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let path = directory + "/k.kcf"
        try sandbox.createKeychain(at: path)
        try sandbox.addGeneric(account: "a", service: "s", secret: "x", extra: ["-k", path])
        let asRoot = getuid() == 0
        if asRoot {
            // Root ignores permission bits: run kcf as nobody, who can read the file but not write the directory.
            try #require(FileManager.default.isExecutableFile(atPath: ReadOnlyCommandTests.setpriv), "setpriv is needed to drop root")
            chmod(path, 0o644)
        } else {
            chmod(directory, 0o555)
        }
        defer { chmod(directory, 0o755) }
        let result = try ReadOnlyCommandTests.kcf(["delete-keychain", path], stdin: "", sandbox: sandbox, asNobody: asRoot)
        #expect(result.status == 195, "\(result.stderr)")
        #expect(result.stderr.contains("cannot delete \(path): Permission denied"))
        #expect(Self.exists(path) && Self.exists(path + ".lock"))
        #expect(try sandbox.unlocked(["verify", path]).status == 0)
    }

    @Test("on a closed pipe it still deletes, and exits 4")
    func closedPipe() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let result = try sandbox.run(["delete-keychain", sandbox.keychain], stdinBytes: [], stdout: .brokenPipe)
        #expect(result.status == 4)
        #expect(!Self.exists(sandbox.keychain))
    }
}
