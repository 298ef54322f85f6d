import Foundation
import Testing

/// `kcf export -f pkcs12` and `kcf import FILE.p12`: Python `cryptography`'s files (Fixtures/pkcs12, generate.py)
/// imported as identities; kcf's files read back by kcf and by `cryptography`; wrong passphrases, legacy files,
/// damaged files, existing output files and closed pipes.
@Suite("kcf export/import: PKCS #12")
struct PKCS12CommandTests {
    static let fixturePassword = "pkcs12 fixture password"
    static let rsaCertificate = KcfSandbox.fixture("certificates/rsa2048-v1.der")
    static let ecCertificate = KcfSandbox.fixture("certificates/ec-p256-leaf-v3-no-ski.der")
    static let manifest: [String: [String: String]] = {
        let url = URL(fileURLWithPath: KcfSandbox.fixture("pkcs12/manifest.json"))
        guard let data = try? Data(contentsOf: url) else { return [:] }
        return (try? JSONDecoder().decode([String: [String: String]].self, from: data)) ?? [:]
    }()

    /// Whether python3 with `cryptography`'s pkcs12 module is installed.
    static let pythonCryptography: Bool = {
        guard ShellProcess.exists("python3") else { return false }
        return (try? ShellProcess.run("python3", ["-c", "from cryptography.hazmat.primitives.serialization import pkcs12"]))?.status == 0
    }()

    static func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// Imports `fixture` (in Fixtures/pkcs12) with `passphrase` on stdin after the keychain password.
    static func importFixture(_ sandbox: KcfSandbox, _ fixture: String, passphrase: String = fixturePassword,
                              extra: [String] = []) throws -> KcfProcess.Result {
        try sandbox.unlocked(["import"] + extra + [KcfSandbox.fixture("pkcs12/" + fixture)], then: [passphrase])
    }

    @Test("cryptography's files import as identities: the certificate and the key as written, named as in the file",
          arguments: ["rsa-best-available.p12", "ec-pbes2-aes256-sha256.p12", "ec-few-rounds.p12", "ec-unencrypted.p12",
                      "ec-openssl-aes128-sha1mac.p12", "ec-openssl-nomac.p12",
                      // The legacy ciphers of macOS, Windows and OpenSSL 1.x, and a BER file.
                      "rsa-legacy-3des.p12", "ec-openssl-legacy.p12", "rsa-openssl-legacy-rc2-128.p12",
                      "ec-openssl-legacy-2des.p12", "ec-openssl-pbes2-3des.p12", "ec-ber-legacy.p12",
                      "ec-ber-unencrypted.p12"])
    func importsCryptographyFiles(name: String) throws {
        let entry = try #require(Self.manifest[name])
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let imported = try Self.importFixture(sandbox, name, passphrase: try #require(entry["password"]))
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout == "1 certificate and 1 key imported.\n")
        let friendlyName = try #require(entry["friendly_name"])
        let identities = try sandbox.unlocked(["find-identity"])
        #expect(identities.stdout.contains("\"\(friendlyName)\""), "\(identities.stdout)")
        #expect(identities.stdout.contains("1 identities found"), "\(identities.stdout)")
        let certificate = try sandbox.unlocked(["export", "-c", friendlyName])
        #expect(certificate.stdoutBytes == (try Self.bytes(KcfSandbox.fixture("certificates/" + (entry["certificate"] ?? "")))))
        let key = try sandbox.unlocked(["export", "-t", "privKeys", "-c", friendlyName, "--yes"])
        #expect(Self.hex(key.stdoutBytes) == entry["pkcs8"])
    }

    @Test("export → import: both identities in one file, read into a new keychain as the same items; -P works, with a warning")
    func roundTrip() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try Self.importFixture(sandbox, "rsa-best-available.p12").status == 0)
        #expect(try Self.importFixture(sandbox, "ec-pbes2-aes256-sha256.p12").status == 0)
        let file = sandbox.file("both.p12")
        let exported = try sandbox.unlocked(["export", "-t", "identities", "-f", "pkcs12", "--iterations", "2048", "-o", file],
                                            then: ["new passphrase ✓"])
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stdout.isEmpty)
        #expect(exported.stderr.contains("wrote 2 identities"))
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)

        let other = sandbox.file("other.kcf")
        try sandbox.createKeychain(at: other)
        let imported = try sandbox.run(["import", "-k", other, "-P", "new passphrase ✓", file], stdin: KcfSandbox.password + "\n")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout == "2 certificates and 2 keys imported.\n")
        #expect(imported.stderr.contains("warning: a passphrase given on the command line"))
        let identities = try sandbox.unlocked(["find-identity", "-k", other])
        #expect(identities.stdout.contains("\"RSA fixture\"") && identities.stdout.contains("\"EC fixture\""), "\(identities.stdout)")
        #expect(identities.stdout.contains("2 identities found"))
        for name in ["RSA fixture", "EC fixture"] {
            let before = try sandbox.unlocked(["export", "-t", "privKeys", "-c", name, "--yes"])
            let after = try sandbox.unlocked(["export", "-k", other, "-t", "privKeys", "-c", name, "--yes"])
            #expect(before.stdoutBytes == after.stdoutBytes && !after.stdoutBytes.isEmpty)
            #expect(try sandbox.unlocked(["export", "-c", name]).stdoutBytes == (try sandbox.unlocked(["export", "-k", other, "-c", name]).stdoutBytes))
        }
        // The same items again: 45, unless -U.
        #expect(try sandbox.run(["import", "-k", other, file], stdin: KcfSandbox.password + "\nnew passphrase ✓\n").status == 45)
        let updated = try sandbox.run(["import", "-U", "-k", other, file], stdin: KcfSandbox.password + "\nnew passphrase ✓\n")
        #expect(updated.status == 0, "\(updated.stderr)")
    }

    @Test("kcf's file, the committed one and a fresh one, load in Python cryptography with the key and certificate as they are",
          .enabled(if: pythonCryptography, "python3 with cryptography is not installed"))
    func cryptographyReadsExports() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try Self.importFixture(sandbox, "ec-pbes2-aes256-sha256.p12").status == 0)
        let file = sandbox.file("export.p12")
        let exported = try sandbox.unlocked(["export", "-f", "pkcs12", "--iterations", "1000", "-o", file], then: ["py pass"])
        #expect(exported.status == 0, "\(exported.stderr)")
        let script = """
            import sys
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.serialization import pkcs12
            loaded = pkcs12.load_pkcs12(open(sys.argv[1], 'rb').read(), sys.argv[2].encode())
            print(loaded.key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()).hex())
            print(loaded.cert.certificate.public_bytes(serialization.Encoding.DER).hex())
            print(loaded.cert.friendly_name.decode())
            print(len(loaded.additional_certs))
            """
        let entry = try #require(Self.manifest["ec-pbes2-aes256-sha256.p12"])
        let expected = [try #require(entry["pkcs8"]), Self.hex(try Self.bytes(Self.ecCertificate)), "EC fixture", "0"]
        for (path, passphrase) in [(file, "py pass"), (KcfSandbox.fixture("pkcs12/kcf-export.p12"), "kcf export password")] {
            let result = try ShellProcess.run("python3", ["-c", script, path, passphrase])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.split(separator: "\n").map(String.init) == expected)
            let wrong = try ShellProcess.run("python3", ["-c", script, path, "not it"])
            #expect(wrong.status != 0 && wrong.stderr.contains("ValueError"))
        }
    }

    @Test("a wrong passphrase exits 51 and imports nothing, for a legacy file too; an RC4 file exits 206 naming its algorithm")
    func refusals() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let wrong = try Self.importFixture(sandbox, "rsa-best-available.p12", passphrase: "not the passphrase")
        #expect(wrong.status == 51)
        #expect(wrong.stderr.contains("wrong passphrase"))
        #expect(wrong.stdout.isEmpty)
        let wrongLegacy = try Self.importFixture(sandbox, "ec-openssl-legacy.p12", passphrase: "not the passphrase")
        #expect(wrongLegacy.status == 51)
        #expect(wrongLegacy.stderr.contains("wrong passphrase"))
        let legacy = try Self.importFixture(sandbox, "ec-openssl-legacy-rc4.p12")
        #expect(legacy.status == 206)
        #expect(legacy.stderr.contains("pbeWithSHAAnd40BitRC4"), "\(legacy.stderr)")
        let none = try sandbox.unlocked(["find-identity"])
        #expect(none.stdout.contains("0 identities found"), "\(none.stdout)")
        #expect(try sandbox.unlocked(["find-certificate", "-a"]).status == 44)
        // No passphrase line on stdin: a failure before anything is read, nothing imported.
        let missing = try sandbox.unlocked(["import", KcfSandbox.fixture("pkcs12/ec-few-rounds.p12")])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no password on stdin"))
    }

    @Test("truncated and bit-flipped copies of a fixture exit 206 or 51 with a message, never crash or import", arguments: [7, 31])
    func damagedFiles(stride step: Int) throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let original = try Self.bytes(KcfSandbox.fixture("pkcs12/ec-few-rounds.p12"))
        let path = sandbox.file("damaged.p12")
        for index in Swift.stride(from: 0, to: original.count, by: step) {
            var damaged = step == 7 ? Array(original[0..<index]) : original
            if step != 7 { damaged[index] ^= 0x10 }
            try? FileManager.default.removeItem(atPath: path)
            try Data(damaged).write(to: URL(fileURLWithPath: path))
            let result = try sandbox.run(["import", "-f", "pkcs12", path], stdin: KcfSandbox.password + "\n" + Self.fixturePassword + "\n")
            #expect([51, 206].contains(result.status), "byte \(index): \(result.status) \(result.stderr)")
            #expect(result.stderr.hasPrefix("kcf: import: "), "byte \(index)")
        }
        #expect(try sandbox.unlocked(["find-certificate", "-a"]).status == 44)
    }

    @Test("export: an existing file is never written over; no identity is 44 before asking; a closed stdout is 4")
    func exportRefusals() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let existing = sandbox.file("existing.p12")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
        // Nothing to export yet: 44, and the passphrase is not asked for.
        let empty = try sandbox.unlocked(["export", "-f", "pkcs12", "-o", sandbox.file("new.p12")])
        #expect(empty.status == 44)
        #expect(!FileManager.default.fileExists(atPath: sandbox.file("new.p12")))

        #expect(try Self.importFixture(sandbox, "ec-few-rounds.p12").status == 0)
        let over = try sandbox.unlocked(["export", "-f", "pkcs12", "--iterations", "1000", "-o", existing], then: ["pass"])
        #expect(over.status == 220)
        #expect(try Self.bytes(existing) == Array("keep me".utf8))
        let link = sandbox.file("link.p12")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: sandbox.file("target.p12"))
        #expect(try sandbox.unlocked(["export", "-f", "pkcs12", "--iterations", "1000", "-o", link], then: ["pass"]).status == 220)
        #expect(!FileManager.default.fileExists(atPath: sandbox.file("target.p12")))

        let noPassphrase = try sandbox.unlocked(["export", "-f", "pkcs12", "-o", sandbox.file("new.p12")])
        #expect(noPassphrase.status == 1)
        #expect(!FileManager.default.fileExists(atPath: sandbox.file("new.p12")))
        let emptyPassphrase = try sandbox.unlocked(["export", "-f", "pkcs12", "-o", sandbox.file("new.p12")], then: [""])
        #expect(emptyPassphrase.status == 206)
        #expect(try sandbox.unlocked(["export", "-f", "pkcs12", "-p"], then: ["pass"]).status == 2)
        #expect(try sandbox.unlocked(["export", "-t", "certs", "-f", "pkcs12"], then: ["pass"]).status == 2)
        #expect(try sandbox.unlocked(["export", "-t", "certs", "-P", "x"]).status == 2)
        #expect(try sandbox.unlocked(["export", "-f", "pkcs12", "--iterations", "10"], then: ["pass"]).status == 2)

        let closed = try sandbox.run(["export", "-f", "pkcs12", "--iterations", "1000"],
                                     stdinBytes: Array((KcfSandbox.password + "\npass\n").utf8), stdout: .brokenPipe)
        #expect(closed.status == 4)
        // To stdout: the file, read back by kcf.
        let piped = try sandbox.unlocked(["export", "-f", "pkcs12", "--iterations", "1000"], then: ["pass"])
        #expect(piped.status == 0)
        let copy = sandbox.file("piped.p12")
        try Data(piped.stdoutBytes).write(to: URL(fileURLWithPath: copy))
        #expect(try sandbox.unlocked(["import", "-U", copy], then: ["pass"]).status == 0)
    }
}
