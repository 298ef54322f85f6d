import Foundation

/// `kcf git-setup`: makes git merge keychains with `kcf merge` and diff them with `kcf diff-text` (SPEC.md §43).
enum GitSetupCommand {
    static let command = Command(
        name: "git-setup", summary: "make git merge and diff keychains in a repository with kcf",
        options: [
            OptionSpec(long: "print", help: "print the configuration and the lines, and change nothing"),
            OptionSpec(long: "pattern", .value("GLOB"), help: "the keychains' file names (default *.kcf)"),
        ],
        positionals: [PositionalSpec("DIR", optional: true, values: .file)],
        details: ["""
            In the git repository DIR is in (default: the current directory), sets merge.kcf.driver to
            `kcf merge --base %O %A %B` and diff.kcf.textconv to `kcf diff-text`, and adds the line
            `*.kcf merge=kcf diff=kcf` to the repository's .gitattributes and `*.kcf.lock` to its .gitignore, each
            unless it is there already. kcf is named by its path when `kcf` on $PATH is another program.
            """, """
            git then merges two branches' keychains item by item (an item changed on both keeps both versions,
            one as a conflict copy: `kcf conflicts`) and `git diff` shows changed items, each secret as a keyed
            fingerprint. Both need the keychain's password: from $KCF_PASSWORD, or asked on the terminal.
            The configuration is the repository's own (.git/config); --print shows it to copy elsewhere.
            """],
        run: { (context) throws(CommandError) in try setUp(context) })

    private static func setUp(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let pattern = context.value("pattern") ?? "*.kcf"
        guard !pattern.isEmpty, !pattern.contains(where: { $0.isWhitespace || $0 == "#" }) else {
            throw .usage("--pattern \(pattern): a gitattributes pattern has no spaces or #")
        }
        let kcf = try commandName()
        let settings = [
            ("merge.kcf.name", "KeychainFile merge (kcf merge)"),
            ("merge.kcf.driver", "\(kcf) merge --base %O %A %B"),
            ("diff.kcf.textconv", "\(kcf) diff-text"),
        ]
        let attributesLine = "\(pattern) merge=kcf diff=kcf"
        let ignoreLine = "\(pattern).lock"
        if context.has("print") {
            for (key, value) in settings { Output.line("git config \(key) \(shellQuoted(value))") }
            Output.line("echo \(shellQuoted(attributesLine)) >> .gitattributes")
            Output.line("echo \(shellQuoted(ignoreLine)) >> .gitignore")
            return .success
        }
        let directory = context.arguments.positionals.first ?? "."
        let top = try git(["-C", directory, "rev-parse", "--show-toplevel"], doing: "finding the repository of \(directory)")
        for (key, value) in settings {
            _ = try git(["-C", top, "config", key, value], doing: "setting \(key)")
            Output.line("set \(key) = \(value)")
        }
        for (name, line) in [(".gitattributes", attributesLine), (".gitignore", ignoreLine)] {
            let path = URL(fileURLWithPath: top).appendingPathComponent(name).path
            Output.line(try appendLine(line, to: path) ? "added \(line) to \(path)" : "\(path) has \(line) already")
        }
        return .success
    }

    /// How git's configuration names this program: `kcf` when that is what $PATH finds, else its full path.
    private static func commandName() throws(CommandError) -> String {
        guard let own = Bundle.main.executableURL?.resolvingSymlinksInPath().path else {
            throw .failed("cannot tell where this kcf is; run `kcf git-setup --print` and set the lines by hand")
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("kcf")
            guard FileManager.default.isExecutableFile(atPath: candidate.path) else { continue }
            return candidate.resolvingSymlinksInPath().path == own ? "kcf" : shellQuoted(own)
        }
        return shellQuoted(own)
    }

    /// `text` as one word for sh (git runs drivers with sh): as it is when it has only safe characters.
    private static func shellQuoted(_ text: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+%=:,@")
        guard text.isEmpty || !text.allSatisfy(safe.contains) else { return text }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Runs git and returns its output's first line; a failure says what git said.
    private static func git(_ arguments: [String], doing what: String) throws(CommandError) -> String {
        let result: CapturedProcess.Result
        do throws(CapturedProcess.Failure) {
            result = try CapturedProcess.run(["git"] + arguments, outputLimit: 1 << 20)
        } catch {
            switch error {
            case .notFound: throw .failure("git is not on $PATH; `kcf git-setup --print` shows the lines to set", .failure)
            case .cannotRun(let reason): throw .failure("cannot run git: \(reason)", .failure)
            }
        }
        guard result.status == 0 else {
            let said = String(decoding: result.errors, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw .failure("\(what): git exited \(result.status)\(said.isEmpty ? "" : ": \(said)")", .failure)
        }
        return String(decoding: result.output, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
    }

    /// Appends `line` to the file at `path` (made when missing) unless a line of it is `line` already.
    ///
    /// - Returns: Whether it was added.
    private static func appendLine(_ line: String, to path: String) throws(CommandError) -> Bool {
        // git does not follow a symbolic link in the work tree's .gitattributes: a line written through one would do nothing.
        if (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType == .typeSymbolicLink {
            throw .failure("\(path) is a symbolic link, which git does not read; make it a file and run git-setup again", .failure)
        }
        do {
            let existing = FileManager.default.fileExists(atPath: path) ? try Data(contentsOf: URL(fileURLWithPath: path)) : Data()
            let lines = String(decoding: existing, as: UTF8.self).split(whereSeparator: \.isNewline)
            if lines.contains(where: { $0.trimmingCharacters(in: .whitespaces) == line }) { return false }
            if existing.isEmpty && !FileManager.default.fileExists(atPath: path) {
                guard FileManager.default.createFile(atPath: path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
            }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            try handle.seekToEnd()
            let separator = existing.last.map { $0 == 0x0A ? "" : "\n" } ?? ""
            try handle.write(contentsOf: Data((separator + line + "\n").utf8))
            return true
        } catch {
            throw .failure("adding \(line) to \(path): \(error.localizedDescription)", .io)
        }
    }
}
