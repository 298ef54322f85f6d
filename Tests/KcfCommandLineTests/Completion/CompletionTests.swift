import Foundation
import Testing

/// `kcf completion SHELL`: scripts generated from the command table, loaded into the real shells and asked for
/// candidates. The commands and options expected are read from `kcf help` (a different path through the code
/// than the generators), beside a fixed list of commands that must be there.
@Suite("kcf completion: bash, zsh and fish scripts that complete every command and option")
struct CompletionTests {
    /// Commands that must be completed whatever else is added: security's and kcf's own.
    static let requiredCommands = [
        "create-keychain", "add-generic-password", "find-generic-password", "delete-generic-password",
        "add-internet-password", "find-internet-password", "delete-internet-password", "import", "add-certificates",
        "find-certificate", "find-key", "find-identity", "dump-keychain", "change-password", "compact", "verify",
        "salvage", "repair", "demo", "completion", "help", "run", "show-keychain-info", "delete-certificate",
        "delete-identity", "delete-keychain", "export",
    ]

    /// Writes `kcf completion SHELL` to a file in the sandbox and returns its path.
    static func script(_ shell: String, in sandbox: KcfSandbox) throws -> String {
        let result = try sandbox.run(["completion", shell])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let path = sandbox.file("kcf-completion.\(shell)")
        try Data(result.stdout.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("every script names every command kcf help lists and every option of each", arguments: ["bash", "zsh", "fish"])
    func scriptsNameEverything(_ shell: String) throws {
        let sandbox = try KcfSandbox()
        let listing = try KcfHelpListing.read(sandbox)
        #expect(Set(Self.requiredCommands).isSubset(of: listing.map(\.command)), "kcf help lists \(listing.map(\.command))")
        let text = try String(contentsOfFile: try Self.script(shell, in: sandbox), encoding: .utf8)
        for (command, options) in listing {
            #expect(text.contains(command), "\(shell): no \(command)")
            for option in options {
                // fish names options by letter (-s x) and long name (-l name).
                let written = shell != "fish" ? option
                    : option.hasPrefix("--") ? "-l " + option.dropFirst(2) : "-s " + option.dropFirst()
                #expect(text.contains(written), "\(shell): no \(written) of \(command)")
            }
        }
    }

    @Test("bash: the script parses (bash -n), registers _kcf, and completes commands, every option of every command, paths and values")
    func bash() throws {
        let sandbox = try KcfSandbox()
        let listing = try KcfHelpListing.read(sandbox)
        let script = try Self.script("bash", in: sandbox)
        let syntax = try ShellProcess.run("bash", ["-n", script])
        #expect(syntax.status == 0, "\(syntax.stderr)")
        #expect(syntax.stderr.isEmpty)

        try Data().write(to: URL(fileURLWithPath: sandbox.file("notes.kcf")))
        // Each probe prints its words, a tab, then the candidates one per line, then an empty line.
        var probes: [[String]] = [
            ["kcf", "add-gen"], ["kcf", "import", "-t", ""], ["kcf", "find-key", "-t", "p"], ["kcf", "help", "dump"],
            ["kcf", "import", "-f", ""], ["kcf", "import", "--format", "1"], ["kcf", "import", "--st"],
            ["kcf", "completion", ""], ["kcf", "-k", sandbox.file("notes.")], ["kcf", "verify", sandbox.file("notes.")],
            ["kcf", "add-generic-password", "-a", ""], ["kcf", "--keychain", "x.kcf", "find-ke"], ["kcf", ""],
        ]
        probes += listing.map { ["kcf", $0.command, "-"] }
        let calls = probes.map { words in
            "probe " + words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        }
        let program = """
            source \(script) || exit 9
            complete -p kcf
            probe() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _kcf; printf '%s\\n' "$*" "${COMPREPLY[@]}" ''; }
            \(calls.joined(separator: "\n"))
            """
        let result = try ShellProcess.run("bash", ["--norc", "--noprofile", "-c", program])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("complete -F _kcf kcf\n"))
        var candidates: [String: [String]] = [:]
        for block in result.stdout.components(separatedBy: "\n\n") {
            let lines = block.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard let key = lines.last(where: { $0.hasPrefix("kcf") }) else { continue }
            candidates[key] = Array(lines.drop { $0 != key }.dropFirst())
        }
        #expect(candidates["kcf add-gen"] == ["add-generic-password"])
        #expect(candidates["kcf import -t "] == ["cert", "priv"])
        #expect(candidates["kcf import -f "] == ["pkcs12", "bitwarden-csv", "1password-csv", "pass", "dump-keychain", "kdbx"])
        #expect(candidates["kcf import --format 1"] == ["1password-csv"])
        #expect(candidates["kcf import --st"] == ["--strict"])
        #expect(candidates["kcf find-key -t p"] == ["private", "public"])
        #expect(candidates["kcf help dump"] == ["dump-keychain"])
        #expect(candidates["kcf completion "] == ["bash", "zsh", "fish"])
        #expect(candidates["kcf -k \(sandbox.file("notes."))"] == [sandbox.file("notes.kcf")])
        #expect(candidates["kcf verify \(sandbox.file("notes."))"] == [sandbox.file("notes.kcf")])
        #expect(candidates["kcf add-generic-password -a "] == [], "an account is free text: nothing offered")
        #expect(candidates["kcf --keychain x.kcf find-ke"] == ["find-key"], "a global option's value is not the command")
        #expect(Set(candidates["kcf "] ?? []) == Set(listing.map(\.command)))
        for (command, options) in listing {
            #expect(Set(candidates["kcf \(command) -"] ?? []) == Set(options), "kcf \(command) -")
        }
    }

    @Test("zsh: the script parses (zsh -n), compinit registers it, and zsh's completion system completes with it",
          .enabled(if: ShellProcess.exists("zsh"), "zsh is not installed here: only bash is checked"))
    func zsh() throws {
        let sandbox = try KcfSandbox()
        let script = try Self.script("zsh", in: sandbox)
        let syntax = try ShellProcess.run("zsh", ["-n", script])
        #expect(syntax.status == 0, "\(syntax.stderr)")

        // Loaded as a file of $fpath, as `compinit` finds it.
        let functions = sandbox.file("zfunc")
        try FileManager.default.createDirectory(atPath: functions, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: script, toPath: functions + "/_kcf")
        let registered = try ShellProcess.run("zsh", ["-f", "-c", """
            fpath=(\(functions) $fpath); autoload -U compinit; compinit -u -D -d \(sandbox.file("zcompdump"))
            print -r -- $_comps[kcf]
            """])
        #expect(registered.stdout == "_kcf\n", "\(registered.stderr)")

        // Typed into an interactive zsh on a pseudo-terminal; compadd is wrapped to record what is offered.
        let harness = sandbox.file("complete.zsh")
        try Data(Self.zshHarness.utf8).write(to: URL(fileURLWithPath: harness))
        func complete(_ line: String) throws -> [String] {
            let result = try ShellProcess.run("zsh", ["-f", harness, script, line])
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        }
        #expect(try complete("kcf add-gen") == ["add-generic-password"])
        #expect(try complete("kcf import -t ") == ["cert", "priv"])
        #expect(Set(try complete("kcf import -f ")) == ["pkcs12", "bitwarden-csv", "1password-csv", "pass", "dump-keychain", "kdbx"])
        #expect(try complete("kcf help dump") == ["dump-keychain"])
        let options = try complete("kcf find-internet-password -")
        for option in ["-a", "-s", "-r", "-t", "-P", "-g", "-w", "--hex", "--expected-head", "--keychain", "-k"] {
            #expect(options.contains(option), "\(option) not offered: \(options)")
        }
    }

    /// Starts an interactive zsh on a pseudo-terminal (zsh/zpty), loads compinit and the script, types the line
    /// and a Tab, and prints each candidate compadd was given, sorted.
    static let zshHarness = #"""
        zmodload zsh/zpty
        script=$1 line=$2 out=$(mktemp)
        zpty kcfz zsh -f -i
        zpty -w kcfz "PS1=''; autoload -U compinit; compinit -u -D -d ${(q)out}.dump; source ${(q)script}"
        zpty -w kcfz "compadd () { local -a m; builtin compadd -O m \"\$@\"; print -rl -- \$m >> ${(q)out}; builtin compadd \"\$@\"; }"
        zpty -w -n kcfz "$line"$'\t'
        for i in {1..50}; do [[ -s $out ]] && break; sleep 0.1; done
        sleep 0.3
        zpty -d kcfz
        sort -u $out
        rm -f $out $out.dump
        """#

    @Test("fish: the script parses (fish -n) and `complete -C` completes commands, options and values with it",
          .enabled(if: ShellProcess.exists("fish"), "fish is not installed here: only bash is checked"))
    func fish() throws {
        let sandbox = try KcfSandbox()
        let listing = try KcfHelpListing.read(sandbox)
        let script = try Self.script("fish", in: sandbox)
        let syntax = try ShellProcess.run("fish", ["--no-config", "-n", script])
        #expect(syntax.status == 0, "\(syntax.stderr)")
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = sandbox.directory
        environment["XDG_CONFIG_HOME"] = sandbox.file("config")
        func complete(_ line: String) throws -> [String] {
            let result = try ShellProcess.run("fish", ["--no-config", "-c", "source \(script); complete -C '\(line)'"], environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").map { String($0.split(separator: "\t", maxSplits: 1)[0]) }
        }
        #expect(try complete("kcf add-gen") == ["add-generic-password"])
        #expect(try complete("kcf import -t ") == ["cert", "priv"])
        #expect(Set(try complete("kcf import -f ")) == ["pkcs12", "bitwarden-csv", "1password-csv", "pass", "dump-keychain", "kdbx"])
        #expect(try complete("kcf completion ").sorted() == ["bash", "fish", "zsh"])
        #expect(try complete("kcf help dump") == ["dump-keychain"])
        #expect(try complete("kcf --keychain x.kcf find-ke") == ["find-key"])
        for (command, options) in listing {
            let offered = Set(try complete("kcf \(command) -"))
            #expect(offered == Set(options), "kcf \(command) -")
        }
    }

    @Test("an unknown shell is a usage error (2) naming the shells")
    func unknownShell() throws {
        let sandbox = try KcfSandbox()
        let result = try sandbox.run(["completion", "tcsh"])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("the shells are bash, zsh, fish"))
    }
}
