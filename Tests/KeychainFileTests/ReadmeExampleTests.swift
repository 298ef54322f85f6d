import Foundation
import Testing
import KeychainCrypto
import KeychainFile

/// The README's examples, run as written (paths moved into a temporary directory, PBKDF2 made cheap), so the
/// README cannot drift from the API.
@Suite("README examples")
struct ReadmeExampleTests {
    @Test("Quick start, compaction, credentials, pinning, recovery and salvage run as the README shows them")
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
                                         options: .init(expectedHead: try Head(pinned)))
        #expect(reopened.count == 1)

        let recovered = try Keychain.open(at: secrets, credential: .password("a longer passphrase"),
                                          options: .init(recover: true))
        #expect(recovered.recovery?.damage == [] && recovered.count == 1)
        let report = try Keychain.salvage(from: secrets, credential: .password("a longer passphrase"),
                                          to: directory.file("secrets-salvaged.kcf"))
        #expect(report.damage == nil && report.itemCount == 1)
    }

    struct Token: Codable { var access: String }

    @Test("The API tour runs as the README shows it")
    func apiTour() async throws {
        let directory = TemporaryDirectory()
        let keychain = try syncPartOfTheTour(in: directory)
        try await keychain.setPassword("again", forService: "mail.example.com", account: "ann")
        let again = try await keychain.password(forService: "mail.example.com", account: "ann")
        #expect(again == "again")
    }

    /// The synchronous lines of the tour: in an `async` function Swift picks the `async` overloads, which need
    /// `await`.
    func syncPartOfTheTour(in directory: TemporaryDirectory) throws -> Keychain {
        let keychain = try Keychain.create(at: directory.file("secrets.kcf"), credential: .password("correct horse battery staple"),
                                           options: .init(passwordIterations: .insecureForTesting(1_000)))
        let certificateDER = try TestFixtures.bytes("certificates/rsa2048-ca-v3-ski.der")
        let token = Token(access: "abc")
        try keychain.setPassword("s3cret", forService: "mail.example.com", account: "ann")

        try keychain.add(GenericPassword(service: "mail.example.com", account: "bob", password: "hunter2"))
        try keychain.add(InternetPassword(server: "example.com", account: "ann", protocolType: .https, port: 443,
                                          value: Array("pw".utf8)))
        try keychain.add(try Certificate(der: certificateDER))

        var query = Query.genericPassword(service: "mail.example.com")
        query.limit = .one
        let items = try keychain.find(GenericPassword.self, matching: query)
        let refs = try keychain.search(.genericPassword(service: "mail.example.com"), returning: .persistentReference)
        try keychain.update(.genericPassword(service: "mail.example.com", account: "bob"), setting: [.label: .string("Bob")])
        try keychain.delete(.genericPassword(service: "mail.example.com", account: "bob"))
        #expect(items.count == 1 && refs.count == 2)

        try keychain.batch { batch in
            try batch.add(GenericPassword(service: "a", account: "1", password: "x"))
            try batch.delete(.genericPassword(service: "mail.example.com", account: "ann"))
        }

        try keychain.setValue(token, forService: "api.example.com", account: "me")
        let accounts = try keychain.accounts(forService: "mail.example.com")
        #expect(accounts.isEmpty)
        let scratch = try Keychain.inMemory()
        #expect(scratch.count == 0)
        // The typed-throws form of batch still works, and a foreign error from the body is rethrown as is.
        _ = try keychain.batch { (batch) throws(KeychainError) in
            try batch.add(GenericPassword(service: "a", account: "2", password: "y"))
        }
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try keychain.batch { batch in
                try batch.add(GenericPassword(service: "a", account: "3", password: "z"))
                throw Stop()
            }
        }
        #expect(throws: KeychainError.itemNotFound) { try keychain.password(forService: "a", account: "3") }
        return keychain
    }
}
