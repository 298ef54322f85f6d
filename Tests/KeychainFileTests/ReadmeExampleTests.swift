import Foundation
import Testing
import KeychainCrypto
import KeychainFile

/// The README's examples, run as written (paths moved into a temporary directory, PBKDF2 made cheap), so the
/// README cannot drift from the API.
@Suite("README examples")
struct ReadmeExampleTests {
    @Test("Quick start, compaction, credentials, pinning and salvage run as the README shows them")
    func readme() throws {
        let directory = TemporaryDirectory()
        let secrets = directory.file("secrets.kcf")
        let fast = PasswordIterations.insecureForTesting(1_000)

        let keychain = try Keychain.create(at: secrets, credential: .password("correct horse battery staple"),
                                           options: .init(passwordIterations: fast))
        try keychain.add(GenericPassword(service: "mail.example.com", account: "ann", password: "s3cret"))

        let found = try keychain.find(GenericPassword.self, matching: .genericPassword(service: "mail.example.com", account: "ann"))
        #expect(String(decoding: found[0].value!, as: UTF8.self) == "s3cret")

        try keychain.update(.genericPassword(service: "mail.example.com", account: "ann"), setting: [:],
                            secret: Array("n3w".utf8))
        try keychain.add(GenericPassword(service: "other", account: "bob", password: "kept"))
        try keychain.delete(.genericPassword(service: "mail.example.com"))
        #expect(throws: KeychainError.itemNotFound) {
            try keychain.find(GenericPassword.self, matching: .genericPassword(service: "mail.example.com"))
        }

        let result = try keychain.compact()
        #expect(result.after.epoch == 2)
        #expect(try keychain.statistics().itemCount == 1)

        try keychain.changePassword(from: "correct horse battery staple", to: "a longer passphrase", iterations: fast)
        try keychain.addCredential(.key(SymmetricKey(size: .bits256)))
        try keychain.rotateMasterKey(credentials: [.password("a longer passphrase")], iterations: fast)

        let pinned = keychain.head.description
        let reopened = try Keychain.open(at: secrets, credential: .password("a longer passphrase"),
                                         options: .init(expectedHead: Head(pinned)))
        #expect(reopened.count == 1)

        let report = try Keychain.salvage(from: secrets, credential: .password("a longer passphrase"),
                                          to: directory.file("secrets-salvaged.kcf"))
        #expect(report.damage == nil && report.itemCount == 1)
    }
}
