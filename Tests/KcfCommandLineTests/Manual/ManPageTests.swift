import Foundation
import Testing

/// kcf(1): `kcf help --man` generates it from the help text; Docs/kcf.1 is a copy that must not drift from it.
@Suite("kcf help --man: the manual page, generated from the help text and committed as Docs/kcf.1")
struct ManPageTests {
    static let committed = RepositoryFiles.url("Docs/kcf.1")

    /// `kcf help --man`, checked to have succeeded.
    static func generated(_ sandbox: KcfSandbox) throws -> String {
        let result = try sandbox.run(["help", "--man"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        return result.stdout
    }

    @Test("Docs/kcf.1 is byte for byte what kcf help --man prints (regenerate it with: kcf help --man > Docs/kcf.1)")
    func committedPageIsCurrent() throws {
        let sandbox = try KcfSandbox()
        let page = try Self.generated(sandbox)
        let file = try String(contentsOf: Self.committed, encoding: .utf8)
        #expect(file == page, "Docs/kcf.1 differs from `kcf help --man`")
        #expect(page.hasPrefix(".\\\" kcf(1)"))
        #expect(page.contains("\n.TH KCF 1 "))
    }

    @Test("groff reads the page without a warning (-ww)", .enabled(if: ShellProcess.exists("groff"), "groff is not installed"))
    func groffWarnings() throws {
        let result = try ShellProcess.run("groff", ["-man", "-Tutf8", "-ww", "-z", Self.committed.path])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    @Test("man -l renders the page with every command kcf help lists as a subsection and every option of each",
          .enabled(if: ShellProcess.exists("man"), "man is not installed"))
    func rendersWithMan() throws {
        let sandbox = try KcfSandbox()
        let listing = try KcfHelpListing.read(sandbox)
        var environment = ProcessInfo.processInfo.environment
        environment["MANWIDTH"] = "200"
        environment["LANG"] = "C.UTF-8"
        environment["MAN_KEEP_FORMATTING"] = nil
        let result = try ShellProcess.run("man", ["-l", "-P", "cat", Self.committed.path], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let text = result.stdout
        for heading in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "KEYCHAIN FILE", "PASSWORDS AND SECRETS",
                        "EXIT STATUS", "SEE ALSO"] {
            #expect(text.contains("\n\(heading)\n"), "no section \(heading)")
        }
        #expect(text.contains("kcf - encrypted keychain files (KeychainFile)"))
        for (command, options) in listing {
            guard let start = text.range(of: "\n   \(command)\n") else {
                Issue.record("no subsection for \(command)")
                continue
            }
            // The command's subsection runs to the next one; its options are there, the global ones in OPTIONS.
            let rest = text[start.upperBound...]
            let end = rest.range(of: "\n   [a-z]", options: .regularExpression)?.lowerBound ?? rest.endIndex
            let subsection = rest[..<end] + (text.components(separatedBy: "\nOPTIONS\n").last ?? "")
            #expect(subsection.contains("kcf \(command)"), "\(command): no synopsis")
            for option in options {
                #expect(subsection.contains(option), "\(command): \(option) is not in the manual")
            }
        }
        for status in ["0", "2", "44", "51", "93", "220"] {
            #expect(text.range(of: "\n {7}\(status)\\s+\\S", options: .regularExpression) != nil, "exit status \(status) not listed")
        }
        // Options are written with real hyphen-minus characters, so that they can be copied from the page, and
        // backslashes come out as backslashes (add-generic-password's details quote "\n or \r\n").
        #expect(text.contains("--password-stdin"))
        #expect(text.contains("(\\n or \\r\\n)"))
    }

    @Test("help --man COMMAND is a usage error; help --man and completion on a closed pipe exit 4")
    func misuseAndClosedPipe() throws {
        let sandbox = try KcfSandbox()
        let both = try sandbox.run(["help", "--man", "find-key"])
        #expect(both.status == 2)
        #expect(both.stderr.contains("--man prints the whole manual"))
        for arguments in [["help", "--man"], ["completion", "bash"], ["help"]] {
            let result = try sandbox.run(arguments, stdinBytes: [], stdout: .brokenPipe)
            #expect(result.status == 4, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("cannot write to stdout"), "\(arguments)")
        }
    }
}
