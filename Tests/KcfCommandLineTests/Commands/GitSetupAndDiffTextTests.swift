import Foundation
import KeychainFile
import Testing

/// `kcf diff-text` (git's textconv: items on lines, secrets as keyed fingerprints, SPEC.md §43.8) and
/// `kcf git-setup`, checked against what they must and must not print and write.
@Suite("kcf diff-text and git-setup")
struct GitSetupAndDiffTextTests {
    private var withPassword: [String: String] { ["KCF_PASSWORD": KcfSandbox.password] }

    private func diffText(_ sandbox: KcfSandbox, _ path: String) throws -> [String] {
        let result = try sandbox.run(["diff-text", path], extra: withPassword)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    private func fingerprint(_ line: String) -> String? {
        line.split(separator: " ").last.flatMap { $0.hasPrefix("secret=") ? String($0.dropFirst(7)) : nil }
    }

    @Test("One line per item; a fingerprint follows its own secret only, differs between items sharing a secret, shows no secret")
    func linesAndFingerprints() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let add = ["add-generic-password", "-s", "mail", "-w", "shared secret"]
        #expect(try sandbox.run(add + ["-a", "ann", "-l", "two\nlines \"quoted\""], extra: withPassword).status == 0)
        #expect(try sandbox.run(add + ["-a", "bob"], extra: withPassword).status == 0)
        #expect(try sandbox.run(["add-internet-password", "-s", "example.com", "-a", "cy", "-w", "zq-unique-9"], extra: withPassword).status == 0)
        // As git hands a textconv an old version: a temporary copy in a directory of its own.
        try FileManager.default.createDirectory(atPath: sandbox.file("git-blob-x1Y2z3"), withIntermediateDirectories: true)
        let copy = sandbox.file("git-blob-x1Y2z3/copy.kcf")
        try Data(try sandbox.keychainBytes()).write(to: URL(fileURLWithPath: copy))

        let before = try diffText(sandbox, sandbox.keychain)
        #expect(before.count == 3, "a newline in a label must not make two lines: \(before)")
        #expect(before[0].hasPrefix("genericPassword ") && before[1].hasPrefix("genericPassword ") && before[2].hasPrefix("internetPassword "))
        #expect(before.contains { $0.contains(#"label="two\nlines \"quoted\"""#) })
        let prints = before.compactMap(fingerprint)
        #expect(prints.count == 3 && prints.allSatisfy { $0.count == 16 && $0.allSatisfy(\.isHexDigit) })
        #expect(prints[0] != prints[1], "two items with one secret must not show that they share it")
        for line in before { #expect(!line.contains("shared secret") && !line.contains("zq-unique-9")) }
        #expect(try diffText(sandbox, copy) == before, "a byte copy prints the same lines")

        // A label changed: its line changes, its fingerprint does not. A secret changed: its fingerprint changes.
        #expect(try sandbox.run(["add-generic-password", "-U", "-s", "mail", "-a", "bob", "-l", "new", "-w", "shared secret"], extra: withPassword).status == 0)
        let relabelled = try diffText(sandbox, sandbox.keychain)
        #expect(Set(relabelled.compactMap(fingerprint)) == Set(prints))
        #expect(try sandbox.run(["add-generic-password", "-U", "-s", "mail", "-a", "bob", "-w", "changed"], extra: withPassword).status == 0)
        let changed = try diffText(sandbox, sandbox.keychain)
        #expect(Set(changed.compactMap(fingerprint)).intersection(prints).count == 2)
        #expect(!FileManager.default.fileExists(atPath: copy + ".lock"), "a textconv of git's temporary copy leaves no lock file beside it")
    }

    @Test("The work tree's lock file is left to the processes that use it; what a terminal would act on or hide is escaped")
    func lockFileAndInvisibleCharacters() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let label = "a\u{202E}b\u{7F}c\u{9B}d\u{2028}e"
        #expect(try sandbox.run(["add-generic-password", "-s", "s", "-a", "a", "-l", label, "-w", "x"], extra: withPassword).status == 0)
        try FileManager.default.removeItem(atPath: sandbox.keychain + ".lock")
        let lines = try diffText(sandbox, sandbox.keychain)
        #expect(FileManager.default.fileExists(atPath: sandbox.keychain + ".lock"), "another process may hold the lock file it made")
        #expect(lines.count == 1 && lines[0].contains(#"label="a\u202eb\u007fc\u009bd\u2028e""#), "\(lines)")
    }

    @Test("A wrong password prints nothing on stdout and fails; an empty keychain prints nothing and succeeds")
    func failures() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try diffText(sandbox, sandbox.keychain).isEmpty)
        let wrong = try sandbox.run(["diff-text", sandbox.keychain], extra: ["KCF_PASSWORD": "wrong"])
        #expect(wrong.status == 51 && wrong.stdout.isEmpty)
    }

    @Test("git-setup adds each line once, keeps what the files held, --print changes nothing, and outside a repository fails")
    func gitSetup() throws {
        let sandbox = try KcfSandbox()
        let repository = sandbox.file("repository")
        try FileManager.default.createDirectory(atPath: repository + "/sub", withIntermediateDirectories: true)
        let git = ["GIT_CONFIG_NOSYSTEM": "1"]
        let initialized = try ShellProcess.run("git", ["-C", repository, "init", "-q"], environment: sandbox.environment.merging(git) { $1 })
        #expect(initialized.status == 0)
        try "*.bin -diff".write(toFile: repository + "/.gitattributes", atomically: true, encoding: .utf8)

        let printed = try sandbox.run(["git-setup", "--print", repository], extra: git)
        #expect(printed.status == 0 && printed.stdout.contains("merge --base %O %A %B"))
        #expect(try String(contentsOfFile: repository + "/.gitattributes", encoding: .utf8) == "*.bin -diff")
        #expect(!FileManager.default.fileExists(atPath: repository + "/.gitignore"))

        for _ in 0..<2 { #expect(try sandbox.run(["git-setup", repository + "/sub"], extra: git).status == 0) }
        #expect(try String(contentsOfFile: repository + "/.gitattributes", encoding: .utf8) == "*.bin -diff\n*.kcf merge=kcf diff=kcf\n")
        #expect(try String(contentsOfFile: repository + "/.gitignore", encoding: .utf8) == "*.kcf.lock\n")

        // A .gitattributes that is a symbolic link: git does not read it, so git-setup says so rather than write through it.
        let linked = sandbox.file("linked")
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: true)
        #expect(try ShellProcess.run("git", ["-C", linked, "init", "-q"], environment: sandbox.environment.merging(git) { $1 }).status == 0)
        try "".write(toFile: sandbox.file("outside.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: linked + "/.gitattributes", withDestinationPath: sandbox.file("outside.txt"))
        let symlinked = try sandbox.run(["git-setup", linked], extra: git)
        #expect(symlinked.status != 0 && symlinked.stderr.contains("symbolic link"))
        #expect(try String(contentsOfFile: sandbox.file("outside.txt"), encoding: .utf8).isEmpty)

        let outside = sandbox.file("not-a-repository")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let refused = try sandbox.run(["git-setup", outside], extra: git.merging(["GIT_CEILING_DIRECTORIES": sandbox.directory]) { $1 })
        #expect(refused.status != 0 && refused.stderr.contains("git"))
        #expect(!FileManager.default.fileExists(atPath: outside + "/.gitattributes"))
    }
}
