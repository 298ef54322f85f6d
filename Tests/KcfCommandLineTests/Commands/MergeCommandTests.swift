import Foundation
import KeychainFile
import Testing

/// `kcf merge`, `kcf conflicts` and `kcf resolve` (SPEC.md §43), and `kcf merge` as git's merge driver: results
/// read back through the library, not from kcf's own words.
@Suite("kcf merge, conflicts and resolve")
struct MergeCommandTests {
    /// A sandbox keychain of four items, and a byte copy of it, "theirs.kcf".
    private func twoCopies() throws -> KcfSandbox {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        for account in ["keep", "change", "both", "remove"] { try sandbox.addGeneric(account: account, service: "s", secret: "\(account)-0") }
        try Data(try sandbox.keychainBytes()).write(to: URL(fileURLWithPath: sandbox.file("theirs.kcf")))
        return sandbox
    }

    private func secret(_ path: String, _ account: String) throws -> String? {
        let keychain = try Keychain.open(at: path, credential: .password(KcfSandbox.password))
        return try? keychain.password(forService: "s", account: account)
    }

    private var withPassword: [String: String] { ["KCF_PASSWORD": KcfSandbox.password] }

    @Test("merge takes the other copy's changes; conflicts lists the copy, exit 7; resolve settles it")
    func mergeConflictsResolve() throws {
        let sandbox = try twoCopies()
        let theirs = sandbox.file("theirs.kcf")
        #expect(try sandbox.run(["add-generic-password", "-k", sandbox.keychain, "-U", "-a", "both", "-s", "s", "-w", "ours"], extra: withPassword).status == 0)
        #expect(try sandbox.run(["delete-generic-password", "-k", sandbox.keychain, "-a", "remove", "-s", "s"], extra: withPassword).status == 0)
        Thread.sleep(forTimeInterval: 0.005)
        #expect(try sandbox.run(["add-generic-password", "-k", theirs, "-U", "-a", "both", "-s", "s", "-w", "theirs"], extra: withPassword).status == 0)
        #expect(try sandbox.run(["add-generic-password", "-k", theirs, "-a", "new", "-s", "s", "-w", "n"], extra: withPassword).status == 0)

        let theirBytes = try sandbox.keychainBytes(theirs)
        let merged = try sandbox.run(["merge", sandbox.keychain, theirs], extra: withPassword)
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(merged.stdout.contains("2 added, 1 changed, 0 deleted"), "\(merged.stdout)")
        #expect(merged.stdout.contains("conflict: generic password"), "\(merged.stdout)")
        #expect(try sandbox.keychainBytes(theirs) == theirBytes, "THEIRS is only read")
        #expect(try secret(sandbox.keychain, "both") == "theirs")
        #expect(try secret(sandbox.keychain, "new") == "n")
        #expect(try secret(sandbox.keychain, "remove") == nil)

        let listed = try sandbox.run(["conflicts", sandbox.keychain], extra: withPassword)
        #expect(listed.status == 7, "\(listed.stderr)")
        let copyID = try #require(listed.stdout.split(separator: " ").dropFirst().first.map(String.init))
        #expect(listed.stdout.hasPrefix("copy \(copyID) of "), "\(listed.stdout)")
        #expect(listed.stdout.contains("account=\"both (conflict "), "\(listed.stdout)")

        #expect(try sandbox.run(["resolve", copyID, sandbox.keychain], extra: withPassword).status == 2, "--keep is required")
        #expect(try sandbox.run(["resolve", "xyz", "--keep", "item", sandbox.keychain], extra: withPassword).status == 2)
        let resolved = try sandbox.run(["resolve", copyID, "--keep", "copy", sandbox.keychain], extra: withPassword)
        #expect(resolved.status == 0, "\(resolved.stderr)")
        #expect(try secret(sandbox.keychain, "both") == "ours")
        #expect(try sandbox.run(["conflicts", sandbox.keychain], extra: withPassword).status == 0)
        #expect(try sandbox.run(["resolve", copyID, "--keep", "item", sandbox.keychain], extra: withPassword).status == 44)

        // Merging theirs again: everything is there, and the resolved conflict does not come back.
        let again = try sandbox.run(["merge", sandbox.keychain, theirs], extra: withPassword)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try sandbox.run(["conflicts", sandbox.keychain], extra: withPassword).status == 0, "\(again.stdout)")
        #expect(try secret(sandbox.keychain, "both") == "ours")
    }

    @Test("A copy that shares the keychain's history merges with no conflict for a one-sided change, and says so; a compacted one shares none, and the output says what that costs")
    func sharedHistoryReported() throws {
        let sandbox = try twoCopies()
        let theirs = sandbox.file("theirs.kcf")
        #expect(try sandbox.run(["add-generic-password", "-k", theirs, "-U", "-a", "change", "-s", "s", "-w", "theirs"], extra: withPassword).status == 0)
        let compacted = sandbox.file("compacted.kcf")
        try Data(try sandbox.keychainBytes(sandbox.keychain)).write(to: URL(fileURLWithPath: compacted))
        #expect(try sandbox.run(["add-generic-password", "-k", compacted, "-U", "-a", "change", "-s", "s", "-w", "compacted"], extra: withPassword).status == 0)
        #expect(try sandbox.run(["compact", "-k", compacted], extra: withPassword).status == 0)
        Thread.sleep(forTimeInterval: 0.005)
        #expect(try sandbox.run(["add-generic-password", "-k", sandbox.keychain, "-U", "-a", "keep", "-s", "s", "-w", "ours"], extra: withPassword).status == 0)

        let shared = try sandbox.run(["merge", sandbox.keychain, theirs], extra: withPassword)
        #expect(shared.status == 0, "\(shared.stderr)")
        #expect(shared.stdout.contains("base: the history both copies share"), "\(shared.stdout)")
        #expect(!shared.stdout.contains("conflict:"), "a change made on one side only: \(shared.stdout)")
        #expect(try secret(sandbox.keychain, "change") == "theirs")
        #expect(try secret(sandbox.keychain, "keep") == "ours")

        // The compacted copy changed "change" too, and shares no history: merged by times, with a conflict copy, said so.
        let unshared = try sandbox.run(["merge", sandbox.keychain, compacted], extra: withPassword)
        #expect(unshared.status == 0, "\(unshared.stderr)")
        #expect(unshared.stdout.contains("no base: the copies share no history"), "\(unshared.stdout)")
        #expect(unshared.stdout.contains("conflict: generic password"), "\(unshared.stdout)")
    }

    @Test("-o writes the merge to a new file and leaves OURS as it is; an existing OUT is refused")
    func output() throws {
        let sandbox = try twoCopies()
        let theirs = sandbox.file("theirs.kcf")
        #expect(try sandbox.run(["add-generic-password", "-k", theirs, "-a", "new", "-s", "s", "-w", "n"], extra: withPassword).status == 0)
        let ours = try sandbox.keychainBytes()
        let out = sandbox.file("out.kcf")
        let result = try sandbox.run(["merge", "-o", out, sandbox.keychain, theirs], extra: withPassword)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try sandbox.keychainBytes() == ours)
        #expect(try secret(out, "new") == "n")
        #expect(try secret(sandbox.keychain, "new") == nil)
        let outBytes = try sandbox.keychainBytes(out)
        #expect(try sandbox.run(["merge", "-o", out, sandbox.keychain, theirs], extra: withPassword).status == 220)
        #expect(try sandbox.keychainBytes(out) == outBytes)
    }

    @Test("Copies of different keychains exit 206 unless --import; a wrong password exits 51 and writes nothing")
    func refusals() throws {
        let sandbox = try twoCopies()
        let other = sandbox.file("other.kcf")
        try sandbox.createKeychain(at: other)
        #expect(try sandbox.run(["add-generic-password", "-k", other, "-a", "o", "-s", "s", "-w", "x"], extra: withPassword).status == 0)
        let bytes = try sandbox.keychainBytes()
        let refused = try sandbox.run(["merge", sandbox.keychain, other], extra: withPassword)
        #expect(refused.status == 206)
        #expect(refused.stderr.contains("another keychain"), "\(refused.stderr)")
        #expect(try sandbox.keychainBytes() == bytes)
        #expect(try sandbox.run(["merge", sandbox.keychain, other], extra: ["KCF_PASSWORD": "wrong"]).status == 51)
        #expect(try sandbox.keychainBytes() == bytes)
        let out = sandbox.file("out.kcf")
        #expect(try sandbox.run(["merge", "-o", out, sandbox.keychain, other], extra: withPassword).status == 206)
        #expect(!FileManager.default.fileExists(atPath: out), "a refused merge leaves no OUT behind")
        #expect(try sandbox.run(["merge", "--base", sandbox.keychain, sandbox.keychain, sandbox.file("theirs.kcf")], extra: withPassword).status == 2)
        #expect(try sandbox.keychainBytes() == bytes)
        #expect(try sandbox.run(["merge", "-o", out, sandbox.keychain, sandbox.file("theirs.kcf")], extra: withPassword).status == 0)
        let permissions = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? NSNumber
        #expect(permissions?.intValue == 0o600)
        #expect(try sandbox.run(["merge", "--import", sandbox.keychain, other], extra: withPassword).status == 0)
        #expect(try secret(sandbox.keychain, "o") == "x")
        #expect(try sandbox.run(["merge", sandbox.keychain, sandbox.file("missing.kcf")], extra: withPassword).status == 220)
    }

    @Test("Set up by kcf git-setup, git merges edits made on two branches with no conflict, and git diff shows items, no secret")
    func gitMergeDriver() throws {
        let sandbox = try twoCopies()
        let repository = sandbox.file("repository")
        try FileManager.default.createDirectory(atPath: repository, withIntermediateDirectories: true)
        let kcf = try KcfProcess.executable().path
        var environment = sandbox.environment
        environment["KCF_PASSWORD"] = KcfSandbox.password
        environment["GIT_CONFIG_NOSYSTEM"] = "1"
        environment["GIT_AUTHOR_NAME"] = "t"
        environment["GIT_AUTHOR_EMAIL"] = "t@example.invalid"
        environment["GIT_COMMITTER_NAME"] = "t"
        environment["GIT_COMMITTER_EMAIL"] = "t@example.invalid"
        func git(_ arguments: [String]) throws -> ShellProcess.Result {
            try ShellProcess.run("git", ["-C", repository] + arguments, environment: environment)
        }
        let keychain = repository + "/secrets.kcf"
        func kcfRun(_ arguments: [String]) throws {
            let result = try sandbox.run(arguments + ["-k", keychain], extra: withPassword)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        #expect(try git(["init", "-q", "-b", "main"]).status == 0)
        let setUp = try sandbox.run(["git-setup", repository], extra: ["GIT_CONFIG_NOSYSTEM": "1"])
        #expect(setUp.status == 0, "\(setUp.stderr)")
        let named = URL(fileURLWithPath: kcf).resolvingSymlinksInPath().path
        #expect(try git(["config", "merge.kcf.driver"]).stdout == "\(named) merge --base %O %A %B\n")
        #expect(try git(["config", "diff.kcf.textconv"]).stdout == "\(named) diff-text\n")
        #expect(try String(contentsOfFile: repository + "/.gitattributes", encoding: .utf8) == "*.kcf merge=kcf diff=kcf\n")
        #expect(try String(contentsOfFile: repository + "/.gitignore", encoding: .utf8) == "*.kcf.lock\n")
        try Data(try sandbox.keychainBytes()).write(to: URL(fileURLWithPath: keychain))
        #expect(try git(["add", "."]).status == 0)
        #expect(try git(["commit", "-q", "-m", "start"]).status == 0)
        #expect(try git(["checkout", "-q", "-b", "other"]).status == 0)
        try kcfRun(["add-generic-password", "-U", "-a", "change", "-s", "s", "-w", "on-other"])
        try kcfRun(["add-generic-password", "-a", "from-other", "-s", "s", "-w", "o"])
        #expect(try git(["commit", "-q", "-am", "other"]).status == 0)
        #expect(try git(["checkout", "-q", "main"]).status == 0)
        try kcfRun(["add-generic-password", "-U", "-a", "keep", "-s", "s", "-w", "on-main"])
        try kcfRun(["delete-generic-password", "-a", "remove", "-s", "s"])
        #expect(try git(["commit", "-q", "-am", "main"]).status == 0)

        // git diff through the textconv: the changed item is a line out and a line in with another fingerprint, the
        // deleted one a line out; no secret, old or new, appears.
        let diff = try git(["diff", "HEAD~1", "HEAD", "--", "secrets.kcf"])
        #expect(diff.status == 0, "\(diff.stderr)")
        let changed = diff.stdout.split(separator: "\n").filter { $0.hasPrefix("-genericPassword") || $0.hasPrefix("+genericPassword") }
        #expect(changed.count == 3, "\(diff.stdout)")
        #expect(changed.filter { $0.contains("account=\"keep\"") }.count == 2)
        #expect(changed.contains { $0.hasPrefix("-") && $0.contains("account=\"remove\"") })
        let fingerprints = Set(changed.filter { $0.contains("account=\"keep\"") }.compactMap { $0.split(separator: " ").last })
        #expect(fingerprints.count == 2 && fingerprints.allSatisfy { $0.hasPrefix("secret=") && $0.count == 7 + 16 })
        for secret in ["keep-0", "on-main", "remove-0", "on-other", "both-0"] { #expect(!diff.stdout.contains(secret)) }

        let merged = try git(["merge", "-q", "--no-edit", "other"])
        #expect(merged.status == 0, "\(merged.stdout)\(merged.stderr)")
        #expect(try secret(keychain, "change") == "on-other")
        #expect(try secret(keychain, "from-other") == "o")
        #expect(try secret(keychain, "keep") == "on-main")
        #expect(try secret(keychain, "remove") == nil)
        #expect(try secret(keychain, "both") == "both-0")
        let opened = try Keychain.open(at: keychain, credential: .password(KcfSandbox.password))
        #expect(try opened.conflictCopies().isEmpty, "a change on one branch only is no conflict with the base")
        let status = try git(["status", "--porcelain", "--ignored"]).stdout
        #expect(status == "!! secrets.kcf.lock\n", "the merge driver left files behind: \(status)")
    }
}
