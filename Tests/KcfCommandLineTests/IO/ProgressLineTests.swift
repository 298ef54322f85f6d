import Foundation
import Testing

/// The progress line of long operations: drawn on stderr only when stderr is a terminal — here a
/// pseudo-terminal that Python's `pty` module opens — and never when stderr is a pipe or closed.
@Suite("kcf progress: a line on a terminal's stderr, nothing when piped")
struct ProgressLineTests {
    /// Runs kcf with stderr on a pseudo-terminal and stdout on a pipe; writes what each received to PREFIX.tty and
    /// PREFIX.out and exits with kcf's status.
    static let harness = """
        import os, pty, select, subprocess, sys
        master, slave = pty.openpty()
        child = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
        # The slave stays open here: Linux may report the hang-up (EIO) on the master before the last bytes the
        # child wrote have been moved to it, and the line's erasure would be lost. Both outputs are read as they
        # come, so a child that writes much to stdout is never blocked; once stdout ends and the child has exited,
        # the terminal is drained until it stays quiet.
        out = child.stdout.fileno()
        chunks, output, open_fds = [], [], [master, out]
        while out in open_fds:
            ready, _, _ = select.select(open_fds, [], [], 0.1)
            for fd in ready:
                data = os.read(fd, 65536)
                if fd == out and not data:
                    open_fds.remove(out)
                (chunks if fd == master else output).append(data)
        child.wait()
        while select.select([master], [], [], 0.5)[0]:
            chunks.append(os.read(master, 65536))
        open(sys.argv[1] + ".tty", "wb").write(b"".join(chunks))
        open(sys.argv[1] + ".out", "wb").write(b"".join(output))
        sys.exit(child.returncode)
        """

    /// What one run on a terminal printed.
    struct TerminalRun {
        let status: Int32
        let terminal: String
        let stdout: String
    }

    /// Runs `kcf ARGUMENTS` with stderr on a pseudo-terminal, the keychain password in KCF_PASSWORD.
    static func onTerminal(_ arguments: [String], _ sandbox: KcfSandbox, extra: [String: String] = [:]) throws -> TerminalRun {
        let script = sandbox.file("pty-harness.py")
        try Data(harness.utf8).write(to: URL(fileURLWithPath: script))
        let prefix = sandbox.file("run-\(UUID().uuidString)")
        var environment = sandbox.environment.merging(extra) { $1 }
        environment["KCF_PASSWORD"] = KcfSandbox.password
        let result = try ShellProcess.run("python3", [script, prefix, try KcfProcess.executable().path] + arguments, environment: environment)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        return TerminalRun(status: result.status,
                           terminal: String(decoding: try Data(contentsOf: URL(fileURLWithPath: prefix + ".tty")), as: UTF8.self),
                           stdout: String(decoding: try Data(contentsOf: URL(fileURLWithPath: prefix + ".out")), as: UTF8.self))
    }

    /// The bytes a line drawn and then erased leaves: carriage return, the line, carriage return, as many spaces, carriage return.
    static func drawnAndErased(_ line: String) -> String {
        "\r" + line + "\r" + String(repeating: " ", count: line.count) + "\r"
    }

    /// Whether `terminal` is `line` drawn, then redrawn any number of times as the operation reports its steps
    /// (at most every tenth of a second, so how many depends on the machine's speed), then erased: nothing but
    /// `kcf: COMMAND:` lines and the spaces that erase them.
    static func drawnRedrawnAndErased(_ terminal: String, first line: String) -> Bool {
        let pieces = terminal.split(separator: "\r", omittingEmptySubsequences: false)
        guard terminal.hasPrefix("\r" + line), let last = pieces.dropLast().last, pieces.last == "",
              !last.isEmpty, last.allSatisfy({ $0 == " " }) else { return false }
        let prefix = line.prefix { $0 != ":" } + ":"
        return pieces.dropFirst().dropLast().allSatisfy { $0.hasPrefix(prefix) || $0.allSatisfy { $0 == " " } }
    }

    @Test("compact, verify and an import draw their line on a terminal and erase it before anything else is printed",
          .enabled(if: ShellProcess.exists("python3"), "python3 (for its pty module) is not installed"))
    func terminal() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "mail", secret: "one")
        try sandbox.addGeneric(account: "bob", service: "mail", secret: "two")

        let compact = try Self.onTerminal(["compact"], sandbox)
        #expect(compact.status == 0)
        #expect(compact.terminal == Self.drawnAndErased("kcf: compact: rewriting the file: items written…"))
        #expect(compact.stdout.hasPrefix("before: 2 items"))

        let verify = try Self.onTerminal(["verify"], sandbox)
        #expect(verify.status == 0)
        #expect(verify.terminal == Self.drawnAndErased("kcf: verify: decrypting every secret, class 0 of 4 (0%)"))
        #expect(verify.stdout.hasSuffix("result: OK\n"))

        let csv = sandbox.file("export.csv")
        try Data(CSVExportImportTests.bitwarden.utf8).write(to: URL(fileURLWithPath: csv))
        let imported = try Self.onTerminal(["import", csv], sandbox)
        #expect(imported.status == 0)
        // The report first (a terminal turns \n into \r\n), then the line while the items are written, erased.
        #expect(imported.terminal.hasPrefix("kcf: import: not imported: folder, in 2 items"))
        #expect(imported.terminal.hasSuffix("\r\n" + Self.drawnAndErased("kcf: import: writing 5 items…")))
        #expect(imported.stdout == "5 items imported (2 generic passwords, 3 internet passwords).\n")
    }

    @Test("compact counts the items written to the new file as the library reports them (every record of 4,096 items)",
          .enabled(if: ShellProcess.exists("python3"), "python3 (for its pty module) is not installed"))
    func compactCountsItems() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        // 50,000 logins: a compaction of them takes several tenths of a second here, and reports every 4,096 items,
        // so that reports come after the line's tenth-of-a-second pause.
        let rows = (0..<50_000).map { ",,login,site\($0),,,0,https://site\($0).example,user\($0),pw\($0)," }
        let csv = sandbox.file("many.csv")
        try Data(([CSVExportImportTests.bitwardenHeader] + rows).joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: csv))
        #expect(try sandbox.unlocked(["import", csv]).status == 0)

        let compact = try Self.onTerminal(["compact"], sandbox)
        #expect(compact.status == 0)
        let prefix = "\rkcf: compact: rewriting the file: items written"
        #expect(compact.terminal.hasPrefix(prefix + "…"))
        let counts = compact.terminal.components(separatedBy: prefix).dropFirst(2).map { $0.prefix { $0 != "\r" } }
        #expect(!counts.isEmpty, "at least one count drawn: \(compact.terminal.debugDescription)")
        #expect(counts.allSatisfy { $0.hasPrefix(" ") && $0.contains(" of 50000 (") }, "\(counts)")
        #expect(compact.stdout.hasPrefix("before: 50000 items"))
    }

    @Test("a pass import redraws how many files are decrypted, and erases the line before its report",
          .enabled(if: ShellProcess.exists("python3") && GnuPGHome.isAvailable, "python3 or gpg is not installed"))
    func decryptingOnTerminal() throws {
        let store = try PasswordStoreImportTests.Store()
        for index in 0..<3 { try store.entry("site\(index)", "pw\(index)\n") }
        try store.file("notes.txt", Array("x".utf8))
        try store.sandbox.createKeychain()
        // A gpg that takes 150 ms a file, so that each step comes more than the tenth of a second after the last
        // drawing, and is drawn.
        let bin = store.sandbox.file("slow-bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let gpg = try #require(ShellProcess.path(of: "gpg"))
        try Data("#!/bin/sh\nsleep 0.15\nexec \(gpg) \"$@\"\n".utf8).write(to: URL(fileURLWithPath: bin + "/gpg"))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/gpg")
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let run = try Self.onTerminal(["import", store.root], store.sandbox, extra: ["PATH": path])
        #expect(run.status == 0)
        #expect(run.stdout == "3 items imported (3 generic passwords). 1 skipped (listed on stderr).\n")
        let steps = ["0 of 3 (0%)", "1 of 3 (33%)", "2 of 3 (66%)", "3 of 3 (100%)"].map { "\rkcf: import: decrypting " + $0 }.joined()
        let erased = "\r" + String(repeating: " ", count: "kcf: import: decrypting 3 of 3 (100%)".count) + "\r"
        #expect(run.terminal == steps + erased + "kcf: import: skipped notes.txt: not a .gpg file\r\n"
                + Self.drawnAndErased("kcf: import: writing 3 items…"))
    }

    @Test("salvage and repair draw their line on a terminal and erase it before their report",
          .enabled(if: ShellProcess.exists("python3"), "python3 (for its pty module) is not installed"))
    func salvageAndRepairOnTerminal() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "mail", secret: "one")

        let salvage = try Self.onTerminal(["salvage", sandbox.file("copy.kcf"), sandbox.keychain], sandbox)
        #expect(salvage.status == 0)
        #expect(Self.drawnRedrawnAndErased(salvage.terminal, first: "kcf: salvage: reading every record that still verifies, then writing its items…"),
                "\(salvage.terminal.debugDescription)")
        #expect(salvage.stdout.contains("items written: 1\n"), "\(salvage.stdout)")

        // A version 1 keychain is rewritten by repair (a version 2 one whose records all verify has its parity
        // repaired in place instead, which writes no items).
        let versionOne = try KcfSandbox()
        try versionOne.createKeychain(formatVersion: 1)
        try versionOne.addGeneric(account: "ann", service: "mail", secret: "one")
        let repair = try Self.onTerminal(["repair"], versionOne)
        #expect(repair.status == 0)
        #expect(Self.drawnRedrawnAndErased(repair.terminal, first: "kcf: repair: copying the file, then rewriting it with every item that verifies…"),
                "\(repair.terminal.debugDescription)")
        #expect(repair.stdout.contains("items written: 1\n"), "\(repair.stdout)")
    }

    @Test("a KeePass import draws a line while the database's key is derived, erased before its report",
          .enabled(if: ShellProcess.exists("python3"), "python3 (for its pty module) is not installed"))
    func keePassOnTerminal() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        // The database's password by -P: the harness gives kcf no stdin.
        let run = try Self.onTerminal(["import", "-P", "correct horse ☃ battery", KcfSandbox.fixture("kdbx/aeskdf-aes256-gzip.kdbx")], sandbox)
        #expect(run.status == 0)
        let line = Self.drawnAndErased("kcf: import: deriving the database's key and decrypting it…")
        let report = "kcf: import: skipped entry"
        let drawn = try #require(run.terminal.range(of: line), "\(run.terminal.debugDescription)")
        let reported = try #require(run.terminal.range(of: report), "\(run.terminal.debugDescription)")
        #expect(drawn.upperBound <= reported.lowerBound, "the line is erased before the report: \(run.terminal.debugDescription)")
        #expect(run.stdout.hasPrefix("5 items imported"), "\(run.stdout)")
    }

    @Test("with stderr a pipe or closed, no progress is written: stderr holds only what it held before")
    func notOnATerminal() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "mail", secret: "one")
        for arguments in [["compact"], ["verify"]] {
            let piped = try sandbox.unlocked(arguments)
            #expect(piped.status == 0)
            #expect(piped.stderr.isEmpty, "\(arguments): \(piped.stderr)")
        }
        let csv = sandbox.file("export.csv")
        try Data(CSVExportImportTests.bitwarden.utf8).write(to: URL(fileURLWithPath: csv))
        let imported = try sandbox.unlocked(["import", csv])
        #expect(imported.status == 0)
        #expect(!imported.stderr.contains("\r"))
        #expect(!imported.stderr.contains("writing"))
        let password = Array((KcfSandbox.password + "\n").utf8)
        #expect(try sandbox.run(["compact"], stdinBytes: password, stderr: .closed).status == 0)
        #expect(try sandbox.run(["salvage", sandbox.file("copy.kcf"), sandbox.keychain], stdinBytes: password, stderr: .closed).status == 0)
        #expect(try sandbox.run(["repair"], stdinBytes: password, stderr: .closed).status == 0)
    }
}
