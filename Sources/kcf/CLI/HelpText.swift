import KeychainFile

/// The text of `kcf help`: commands, where the keychain and its password come from, exit statuses.
enum HelpText {
    static let helpCommand = Command(
        name: "help", summary: "list the commands and exit statuses, or print one command's usage",
        options: [OptionSpec(long: "man", help: "print the manual page instead, as roff (the text of Docs/kcf.1): kcf help --man | man -l -")],
        positionals: [PositionalSpec("COMMAND", optional: true, values: .command)],
        run: { (context) throws(CommandError) in
            if context.has("man") {
                guard context.arguments.positionals.isEmpty else { throw .usage("--man prints the whole manual: leave out COMMAND") }
                Output.bytes(Array(ManPage.text.utf8))
                return .success
            }
            guard let name = context.arguments.positionals.first else {
                Output.line(overview)
                return .success
            }
            guard let command = CommandTable.command(named: name) else {
                throw .usage("unknown command \"\(name)\"")
            }
            Output.line(command.usage)
            return .success
        })

    /// What kcf is, in one line: the first line of `kcf help` and the NAME of the manual page.
    static let tagline = "encrypted keychain files (KeychainFile), with the commands and flags of macOS security(1)"

    /// The ways to run kcf, as `kcf help` shows them.
    static let synopsis = [
        "kcf [-k PATH] [--password-stdin] COMMAND [options] [--] [arguments]",
        "kcf help [COMMAND]",
        "kcf COMMAND --help",
    ]

    /// The sections after the command list.
    static let sections = [
        HelpSection(heading: "keychain file:", manualHeading: "KEYCHAIN FILE", lines: [
            "-k PATH or --keychain PATH (or the command's last argument, where its usage shows one), else",
            "$KCF_KEYCHAIN, else the per-user default: $XDG_DATA_HOME/kcf/default.kcf or",
            "~/.local/share/kcf/default.kcf on Linux, ~/Library/Application Support/kcf/default.kcf on macOS.",
        ]),
        HelpSection(heading: "passwords and secrets are never needed on the command line:", manualHeading: "PASSWORDS AND SECRETS", lines: [
            "- asked on the terminal (/dev/tty) without echo; prompts go to stderr, results to stdout;",
            "- or read from stdin when stdin is not a terminal (or with --password-stdin): the keychain",
            "  password is the first line, a new password the next line, and an item's secret everything",
            "  after, to the end of input, as bytes, less one final newline (--keep-newline keeps it);",
            "- or, for the keychain password only, from $KCF_PASSWORD. Convenient for automation, but the",
            "  environment is inherited by child processes, readable by the same user and root",
            "  (/proc/PID/environ), and may end up in CI logs or shell history; prefer stdin from a secret",
            "  manager, and never export it in an interactive shell.",
        ]),
        HelpSection(heading: "format versions:", manualHeading: "FORMAT VERSIONS", lines: [
            "New keychains are format version 2; kcf reads versions 1, 2 and 3. create-keychain",
            "--format-version 3 makes a keychain whose access groups are sealed under keys of their own,",
            "for passwords that reach only some groups (add-credential --groups). A version 1 keychain becomes",
            "version 2 at its first rewrite: compact, change-password, automatic compaction after a change",
            "(once half of a file of at least 1 MiB is dead), or upgrade. With $KCF_KEEP_FORMAT_VERSION=1",
            "every command but upgrade keeps it version 1, for readers that know only version 1.",
            "A key slot whose Argon2id asks for more than 1,024 MiB of memory is refused rather than run;",
            "$KCF_KDF_MEMORY_LIMIT=MiB (1 to 4096) sets that cap for the commands that open a keychain.",
        ]),
    ]

    /// The heading of the options every command takes.
    static let globalOptionsHeading = "options of every command (before or after its name):"

    /// The heading of the exit statuses.
    static let exitStatusHeading = "exit status (keychain errors are the low byte of their OSStatus, as security's are):"

    /// What `kcf --version` prints.
    static var version: String {
        "kcf (KeychainFile): writes keychain format version \(Keychain.formatVersion) (3 when asked), reads versions 1 to 3"
    }

    /// What `kcf help` prints.
    static var overview: String {
        let width = CommandTable.all.map(\.name.count).max() ?? 0
        var lines = ["kcf — " + tagline, ""]
        lines.append("usage: " + synopsis[0])
        lines.append("       " + synopsis[1].padding(toLength: 26, withPad: " ", startingAt: 0) + synopsis[2])
        lines += ["", "commands:"]
        lines += CommandTable.all.map { command in
            let aliases = command.aliases.isEmpty ? "" : " (also: " + command.aliases.joined(separator: ", ") + ")"
            return "    " + command.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + command.summary + aliases
        }
        // The options every command takes, which `kcf help COMMAND` repeats: without them here, --recover and
        // --version would be found only in a command's usage.
        lines += ["", globalOptionsHeading]
        let optionWidth = OptionSpec.global.map(\.synopsis.count).max() ?? 0
        lines += OptionSpec.global.map { "    " + $0.synopsis.padding(toLength: optionWidth + 2, withPad: " ", startingAt: 0) + $0.help }
        for section in sections {
            lines += ["", section.heading]
            lines += section.lines.map { "    " + $0 }
        }
        lines += ["", exitStatusHeading]
        lines += ExitStatus.allCases.map { status -> String in
            let number = String(status.rawValue)
            return "    " + String(repeating: " ", count: 3 - number.count) + number + "  " + status.summary
        }
        return lines.joined(separator: "\n")
    }
}
