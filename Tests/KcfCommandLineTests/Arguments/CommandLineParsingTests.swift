import Foundation
import Testing

@Suite("kcf: command line, help and keychain location")
struct CommandLineParsingTests {
    @Test("an unknown option is a usage error (2) with the command's usage on stderr")
    func unknownOption() throws {
        let sandbox = try KcfSandbox()
        let result = try sandbox.run(["find-generic-password", "--bogus"])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("unknown option --bogus"))
        #expect(result.stderr.contains("usage: kcf find-generic-password"))
        let short = try sandbox.run(["add-internet-password", "-x"])
        #expect(short.status == 2)
        #expect(short.stderr.contains("unknown option -x"))
        #expect(short.stderr.contains("usage: kcf add-internet-password"))
    }

    @Test("--version prints the format version kcf writes and exits 0, before a command or after one")
    func version() throws {
        let sandbox = try KcfSandbox()
        for arguments in [["--version"], ["find-generic-password", "--version"]] {
            let result = try sandbox.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdout == "kcf (KeychainFile): writes keychain format version 2 (3 when asked), reads versions 1 to 3\n")
            #expect(result.stderr.isEmpty)
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.keychain), "--version opens no keychain")
    }

    @Test("missing values, bad values, extra arguments and unknown commands are usage errors")
    func otherUsageErrors() throws {
        let sandbox = try KcfSandbox()
        let missing = try sandbox.run(["find-generic-password", "-a"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("option -a needs a value (ACCOUNT)"))
        let port = try sandbox.run(["find-internet-password", "-P", "70000"])
        #expect(port.status == 2)
        #expect(port.stderr.contains("not a port number"))
        let extra = try sandbox.run(["compact", "one.kcf", "two.kcf"])
        #expect(extra.status == 2)
        #expect(extra.stderr.contains("unexpected argument \"two.kcf\""))
        let flagValue = try sandbox.run(["dump-keychain", "--json=yes"])
        #expect(flagValue.status == 2)
        #expect(flagValue.stderr.contains("takes no value"))
        let command = try sandbox.run(["frobnicate"])
        #expect(command.status == 2)
        #expect(command.stderr.contains("unknown command \"frobnicate\""))
        let nothing = try sandbox.run([])
        #expect(nothing.status == 2)
        #expect(nothing.stderr.contains("usage: kcf"))
    }

    @Test("`--` ends the options: a keychain path starting with - is a path")
    func doubleDash() throws {
        let sandbox = try KcfSandbox()
        let created = try sandbox.run(["create-keychain", "--insecure-iterations", "1000", "--", "-odd.kcf"],
                                      stdin: KcfSandbox.password + "\n")
        #expect(created.status == 0, "\(created.stderr)")
        #expect(FileManager.default.fileExists(atPath: sandbox.file("-odd.kcf")))
        let found = try sandbox.unlocked(["find-generic-password", "-a", "nobody", "--", "-odd.kcf"])
        #expect(found.status == 44, "the path after -- is the keychain, not an option: \(found.stderr)")
        let unparsed = try sandbox.unlocked(["find-generic-password", "-a", "nobody", "-odd.kcf"])
        #expect(unparsed.status == 2, "without --, -odd.kcf is options")
    }

    @Test("help lists every command and exit status; help COMMAND and --help print the usage")
    func help() throws {
        let sandbox = try KcfSandbox()
        let help = try sandbox.run(["help"])
        #expect(help.status == 0)
        for command in ["create-keychain", "add-generic-password", "find-generic-password", "delete-generic-password",
                        "add-internet-password", "find-internet-password", "delete-internet-password", "import",
                        "add-certificates", "find-certificate", "find-key", "find-identity", "dump-keychain",
                        "change-password", "compact", "verify", "salvage", "demo", "delete-certificate", "delete-identity",
                        "export", "run", "delete-keychain", "upgrade", "show-keychain-info", "repair", "completion", "help"] {
            #expect(help.stdout.contains("    \(command) "), "help does not list \(command)")
        }
        let lines = help.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("    show-keychain-info ") && $0.hasSuffix(" (also: statistics)") }, "aliases are listed")
        // The options every command takes: --recover and --version are not only in each command's usage.
        let options = try #require(help.stdout.components(separatedBy: "\noptions of every command (before or after its name):\n").dropFirst().first,
                                   "help lists no options of every command")
        for option in ["-k|--keychain PATH", "--password-stdin", "--recover", "-h|--help", "--version"] {
            #expect(options.hasPrefix("    \(option) ") || options.contains("\n    \(option) "), "help does not list \(option)")
        }
        for status in ["  0  success", " 44  item not found", " 45  duplicate item", " 51  wrong password",
                       "  2  usage error", " 93  corrupted", "220  I/O error", "  1  other error"] {
            #expect(help.stdout.contains(status), "help does not list \(status)")
        }
        #expect(help.stdout.contains("KCF_PASSWORD"))
        let usage = try sandbox.run(["help", "find-certificate"])
        #expect(usage.status == 0)
        #expect(usage.stdout.hasPrefix("usage: kcf find-certificate"))
        let flag = try sandbox.run(["add-generic-password", "--help"])
        #expect(flag.status == 0)
        #expect(flag.stdout.contains("-U"))
    }

    @Test("a default keychain whose directory cannot be made is an I/O error (220) with the system's reason")
    func defaultDirectoryNotMade() throws {
        let sandbox = try KcfSandbox()
        sandbox.environment["KCF_KEYCHAIN"] = nil
        // XDG_DATA_HOME below a regular file: mkdir fails with ENOTDIR.
        try Data().write(to: URL(fileURLWithPath: sandbox.file("a-file")))
        sandbox.environment["XDG_DATA_HOME"] = sandbox.file("a-file/data")
        let created = try sandbox.run(["create-keychain", "--insecure-iterations", "1000"], stdin: KcfSandbox.password + "\n")
        #expect(created.status == 220, "\(created.stderr)")
        let lines = created.stderr.split(separator: "\n").map(String.init)
        #expect(lines.last == "kcf: create-keychain: cannot create the directory \(sandbox.file("a-file/data")): Not a directory (errno 20)")
    }

    @Test("without -k or KCF_KEYCHAIN the keychain is $XDG_DATA_HOME/kcf/default.kcf, its directory made 0700")
    func defaultLocation() throws {
        let sandbox = try KcfSandbox()
        sandbox.environment["KCF_KEYCHAIN"] = nil
        let created = try sandbox.run(["create-keychain", "--insecure-iterations", "1000"], stdin: KcfSandbox.password + "\n")
        #expect(created.status == 0, "\(created.stderr)")
        let path = sandbox.file("data/kcf/default.kcf")
        #expect(FileManager.default.fileExists(atPath: path))
        let attributes = try FileManager.default.attributesOfItem(atPath: sandbox.file("data/kcf"))
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        let file = try FileManager.default.attributesOfItem(atPath: path)
        #expect((file[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        // -k wins over the default; a missing keychain is an I/O error found before any password is read.
        let missing = try sandbox.run(["find-generic-password", "-k", sandbox.file("nothing.kcf")])
        #expect(missing.status == 220)
        #expect(missing.stderr.contains("no keychain at"))
        let again = try sandbox.run(["create-keychain"], stdin: KcfSandbox.password + "\n")
        #expect(again.status == 1)
        #expect(again.stderr.contains("already exists"))
    }
}
