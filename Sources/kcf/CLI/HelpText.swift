import KeychainFile

/// The text of `kcf help`: commands, where the keychain and its password come from, exit statuses.
enum HelpText {
    static let helpCommand = Command(
        name: "help", summary: "list the commands and exit statuses, or print one command's usage",
        positionals: [PositionalSpec("COMMAND", optional: true, values: .command)],
        run: { (context) throws(CommandError) in
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

    /// What `kcf --version` prints.
    static var version: String {
        "kcf (KeychainFile): writes keychain format version \(Keychain.formatVersion), reads versions 1 to \(Keychain.formatVersion)"
    }

    static var overview: String {
        let width = CommandTable.all.map(\.name.count).max() ?? 0
        let commands = CommandTable.all.map { "    " + $0.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.summary }
        let statuses = ExitStatus.allCases.map { status -> String in
            let number = String(status.rawValue)
            return "    " + String(repeating: " ", count: 3 - number.count) + number + "  " + status.summary
        }
        return (["""
            kcf — encrypted keychain files (KeychainFile), with the commands and flags of macOS security(1)

            usage: kcf [-k PATH] [--password-stdin] COMMAND [options] [--] [arguments]
                   kcf help [COMMAND]        kcf COMMAND --help

            commands:
            """] + commands + ["""

            keychain file:
                -k PATH or --keychain PATH (or the command's last argument, where its usage shows one), else
                $KCF_KEYCHAIN, else the per-user default: $XDG_DATA_HOME/kcf/default.kcf or
                ~/.local/share/kcf/default.kcf on Linux, ~/Library/Application Support/kcf/default.kcf on macOS.

            passwords and secrets are never needed on the command line:
                - asked on the terminal (/dev/tty) without echo; prompts go to stderr, results to stdout;
                - or read from stdin when stdin is not a terminal (or with --password-stdin): the keychain
                  password is the first line, a new password the next line, and an item's secret everything
                  after, to the end of input, as bytes, less one final newline (--keep-newline keeps it);
                - or, for the keychain password only, from $KCF_PASSWORD. Convenient for automation, but the
                  environment is inherited by child processes, readable by the same user and root
                  (/proc/PID/environ), and may end up in CI logs or shell history; prefer stdin from a secret
                  manager, and never export it in an interactive shell.

            exit status (keychain errors are the low byte of their OSStatus, as security's are):
            """] + statuses).joined(separator: "\n")
    }
}
