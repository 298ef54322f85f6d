import Foundation
import Testing

/// README.md's `kcf` session ("Command line: `kcf`"), run as a new user would type it: every `kcf` command of
/// the block's `$` lines, in order, on the per-user default keychain, in a directory holding the files the
/// block names. Each must exit 0, or the status the block shows after it; each line the block shows after a
/// command must be a line that command printed. So a README command that kcf refuses, or output the README
/// shows that kcf does not print, fails here.
@Suite("README: the kcf session of the Command line section runs as shown")
struct ReadmeCommandLineTests {
    /// One `$` line of the block: the `kcf` commands on it (their words, without `kcf`), and the lines shown
    /// after it.
    struct SessionLine {
        let text: String
        var commands: [[String]]
        var shown: [String] = []
        /// Whether the line ends in `echo $?`: then the last line shown is the last command's status.
        var echoesStatus: Bool
    }

    /// The `$` lines of the first block after the heading "## Command line: `kcf`", with `~` as `home`.
    static func session(home: String) throws -> [SessionLine] {
        let readme = try String(contentsOf: RepositoryFiles.url("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "\n## Command line: `kcf`\n").dropFirst().first,
                                   "README.md has no section \"Command line: `kcf`\"")
        // The text between the section's first fence and the next.
        let fenced = section.components(separatedBy: "```\n")
        try #require(fenced.count >= 3, "no block in the section")
        let block = fenced[1]
        var lines: [SessionLine] = []
        for line in block.split(separator: "\n").map(String.init) {
            guard line.hasPrefix("$ ") else {
                try #require(!lines.isEmpty, "output before the first command: \(line)")
                lines[lines.count - 1].shown.append(line)
                continue
            }
            // A comment starts at " #"; commands are separated by ";" and "|"; redirections and process
            // substitution end a command's words.
            let code = String(line.dropFirst(2)).components(separatedBy: " #")[0]
            try #require(!code.contains("\"") && !code.contains("'"), "quoted words are not split here: \(line)")
            var commands: [[String]] = []
            for part in code.split(whereSeparator: { $0 == ";" || $0 == "|" }) {
                let words = part.split(separator: " ").map(String.init)
                guard let start = words.firstIndex(where: { $0 == "kcf" || $0 == "<(kcf" }) else { continue }
                var arguments: [String] = []
                for word in words[(start + 1)...] {
                    if word.hasPrefix(">") || word.hasPrefix("<") { break }
                    let word = word.hasPrefix("~/") ? home + word.dropFirst() : word
                    arguments.append(word.hasSuffix(")") ? String(word.dropLast()) : word)
                    if word.hasSuffix(")") { break }
                }
                commands.append(arguments)
            }
            lines.append(SessionLine(text: line, commands: commands, echoesStatus: code.hasSuffix("echo $?")))
        }
        return lines
    }

    /// The files the session names, and the state it takes as given: a generic password db/app (for `kcf run`,
    /// from the Bitwarden export) and an internet password for example.com.
    static func prepare(_ sandbox: KcfSandbox) throws {
        // cert.pem and key.pem: a certificate and its private key.
        let der = try Data(contentsOf: URL(fileURLWithPath: KcfSandbox.fixture("certificates/rsa2048-ca-v3-ski.der")))
        let base64 = der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        try Data("-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n".utf8).write(to: URL(fileURLWithPath: sandbox.file("cert.pem")))
        try FileManager.default.copyItem(atPath: KcfSandbox.fixture("certificates/keys/rsa2048-ca.pem"), toPath: sandbox.file("key.pem"))
        // identity.p12: another identity, named old.example.com, written by kcf from a scratch keychain.
        let scratch = sandbox.file("scratch.kcf")
        try sandbox.createKeychain(at: scratch)
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: KcfSandbox.fixture("pkcs12/manifest.json"))))
        let entry = try #require((manifest as? [String: [String: String]])?["ec-pbes2-aes256-sha256.p12"])
        try Data(try [UInt8](hexString: try #require(entry["pkcs8"]))).write(to: URL(fileURLWithPath: sandbox.file("ec.key")))
        let steps = [
            ["import", "-k", scratch, "-l", "old.example.com", KcfSandbox.fixture("certificates/" + (try #require(entry["certificate"])))],
            ["import", "-k", scratch, "-t", "priv", sandbox.file("ec.key")],
            ["export", "-k", scratch, "-f", "pkcs12", "-o", sandbox.file("identity.p12")],
        ]
        for step in steps {
            let result = try sandbox.run(step, stdin: KcfSandbox.password + "\n" + Self.passphrase + "\n")
            #expect(result.status == 0, "\(step): \(result.stderr)")
        }
        try FileManager.default.removeItem(atPath: sandbox.file("ec.key"))
        // bitwarden_export.csv: a web login for example.com and the database password db/app.
        try Data([CSVExportImportTests.bitwardenHeader, ",,login,Example,,,0,https://example.com,ann,web password,",
                  ",,login,db,,,0,,app,database password,"].joined(separator: "\r\n").utf8)
            .write(to: URL(fileURLWithPath: sandbox.file("bitwarden_export.csv")))
        // psql: exits 0 only when its environment holds db/app's secret, as kcf run should give it.
        let bin = sandbox.file("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try Data("#!/bin/sh\n[ \"$PGPASSWORD\" = 'database password' ] && [ \"$*\" = '-U app' ]\n".utf8)
            .write(to: URL(fileURLWithPath: bin + "/psql"))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/psql")
        sandbox.environment["PATH"] = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
    }

    /// The PKCS #12 passphrase of the session's files.
    static let passphrase = "p12 passphrase"

    /// What a command reads on stdin, as the user would type it at its prompts (the keychain password comes
    /// from KCF_PASSWORD).
    static func input(for arguments: [String]) -> String {
        switch arguments.first {
        case "create-keychain": return KcfSandbox.password + "\n"
        case "add-generic-password": return "s3cret\n"
        case "change-password": return newPassword + "\n"
        case "add-credential": return "a second keychain password\n"
        case "import" where arguments.contains("identity.p12"): return passphrase + "\n"
        case "export" where arguments.contains("pkcs12"): return passphrase + "\n"
        default: return ""
        }
    }

    static let newPassword = "a new keychain password"

    /// The commands as run: `create-keychain`, `change-password` and `add-credential` with a cheap, insecure Argon2id
    /// (`--insecure-argon2id 64`), so that the session's twenty-odd opens do not each spend a 64 MiB derivation.
    static func cheapKeyDerivation(_ arguments: [String]) -> [String] {
        guard let command = arguments.first, ["create-keychain", "change-password", "add-credential"].contains(command) else { return arguments }
        return [command, "--insecure-argon2id", "64"] + arguments.dropFirst()
    }

    @Test("every kcf command of the session exits as shown and prints the lines shown after it")
    func session() throws {
        let sandbox = try KcfSandbox()
        try Self.prepare(sandbox)
        // The session uses the per-user default keychain, ~/.local/share/kcf/default.kcf as the README says (HOME
        // is the sandbox), its password in KCF_PASSWORD.
        sandbox.environment["KCF_KEYCHAIN"] = nil
        sandbox.environment["XDG_DATA_HOME"] = nil
        sandbox.environment["KCF_PASSWORD"] = KcfSandbox.password
        let lines = try Self.session(home: try #require(sandbox.environment["HOME"]))
        #expect(lines.flatMap(\.commands).count >= 20, "found \(lines.map(\.text))")
        for line in lines {
            var last: KcfProcess.Result?
            for arguments in line.commands {
                let result = try sandbox.run(Self.cheapKeyDerivation(arguments), stdin: Self.input(for: arguments))
                let expected = line.echoesStatus && arguments == line.commands.last ? Int32(line.shown.last ?? "") : 0
                #expect(result.status == expected, "README: \(line.text)\nkcf \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
                if arguments.first == "change-password" { sandbox.environment["KCF_PASSWORD"] = Self.newPassword }
                last = result
            }
            guard let last else { continue }
            let printed = Set((last.stdout + last.stderr).split(separator: "\n").map(String.init))
            for shown in line.echoesStatus ? line.shown.dropLast() : line.shown[...] {
                #expect(printed.contains(shown), "README: \(line.text)\nshows \"\(shown)\", which kcf did not print:\n\(last.stdout)\(last.stderr)")
            }
        }
        // What the session did, seen from outside.
        #expect(FileManager.default.fileExists(atPath: sandbox.file(".local/share/kcf/default.kcf")))
        #expect(FileManager.default.fileExists(atPath: sandbox.file("rescued.kcf")))
        #expect(FileManager.default.fileExists(atPath: sandbox.file("backup.p12")))
        let identities = try sandbox.run(["find-identity"])
        #expect(identities.stdout.contains("KeychainFile Test Root") && !identities.stdout.contains("old.example.com"),
                "delete-certificate -c old.example.com took the p12's certificate only: \(identities.stdout)")
    }
}
