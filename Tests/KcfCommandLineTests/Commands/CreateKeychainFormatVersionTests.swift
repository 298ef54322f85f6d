import Foundation
import KeychainFile
import Testing

/// `create-keychain --format-version`: the version of the new file, read back by the library (not by kcf); without
/// the option, the library's default.
@Suite("kcf create-keychain --format-version")
struct CreateKeychainFormatVersionTests {
    static func fileFormatVersion(_ sandbox: KcfSandbox) throws -> Int {
        try Keychain.open(at: sandbox.keychain, credential: .password(KcfSandbox.password)).fileFormatVersion
    }

    @Test("--format-version 1, 2 and 3 write files of that version, which kcf reads and writes", arguments: [1, 2, 3])
    func chosenVersion(version: Int) throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain(formatVersion: version)
        #expect(try Self.fileFormatVersion(sandbox) == version)
        try sandbox.addGeneric(account: "ann", service: "mail", secret: "s3cret")
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "mail", "-w"]).stdout == "s3cret\n")
        #expect(try Self.fileFormatVersion(sandbox) == version)
    }

    @Test("A version 3 keychain takes a credential scoped to a group, which sees that group's items alone")
    func version3Groups() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain(formatVersion: 3)
        try sandbox.addGeneric(account: "ann", service: "mail", secret: "default secret")
        try sandbox.addGeneric(account: "bob", service: "mail", secret: "mail secret", extra: ["--access-group", "TEAM.mail"])
        let scoped = try Keychain.open(at: sandbox.keychain, credential: .password(KcfSandbox.password))
        try scoped.addCredential(.password("scoped"), scope: .groups(["TEAM.mail"]), keyDerivation: .pbkdf2(.insecureForTesting(1_000)))
        let view = try Keychain.open(at: sandbox.keychain, credential: .password("scoped"))
        #expect(try view.search(Query(.genericPassword, limit: .all), returning: [.data]).map { String(decoding: $0.value ?? [], as: UTF8.self) } == ["mail secret"])
    }

    @Test("Without the option, the new file is version 2, the version the library writes")
    func defaultVersion() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try Self.fileFormatVersion(sandbox) == 2)
    }

    @Test("Any other version is a usage error (exit 2) that creates nothing", arguments: ["0", "4", "one", "", "1.0", "3.0"])
    func otherVersions(text: String) throws {
        let sandbox = try KcfSandbox()
        let result = try sandbox.run(["create-keychain", "--insecure-iterations", "1000", "--format-version", text],
                                     stdin: KcfSandbox.password + "\n")
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("--format-version"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.keychain))
    }

    @Test("The help of create-keychain names the option and its values")
    func help() throws {
        let sandbox = try KcfSandbox()
        let help = try sandbox.run(["help", "create-keychain"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--format-version"), "\(help.stdout)")
        #expect(help.stdout.contains("1, 2 or 3"))
    }
}
