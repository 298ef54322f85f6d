// The Swift blocks of the DocC article GettingStarted.md, as the regions between `// example: NAME` and
// `// example end` (DocumentationExampleTests checks them byte for byte). This file imports only what the
// article's blocks import (and Testing).
// example: getting-started-open
import KeychainFile
// example end
import Testing

/// The getting-started article's examples, run as written in a process of their own whose working directory is
/// a fresh temporary directory.
@Suite("Getting-started article examples")
struct GettingStartedExamples {
    @Test("Opening or creating, passwords, typed items and queries run as the article shows them")
    func article() async throws {
        let directory = TemporaryDirectory()
        let certificateDER = try ExampleValues.certificateDER()
        await #expect(processExitsWith: .success) {
            [path = directory.path as String, certificateDER = certificateDER as [UInt8],
             keyFromVault = ExampleValues.keyFromVault as [UInt8]] in
            do {
                try ExampleSandbox.enter(path)
                try Self.article(certificateDER: certificateDER, keyFromVault: keyFromVault)
            } catch {
                Issue.record(error, "an example of the getting-started article threw")
            }
        }
        withExtendedLifetime(directory) {}
    }

    /// The article's blocks: synchronous code, as at the top level of a program (where Swift picks the blocking
    /// calls). Twice: the first run creates the files, the second opens them.
    static func article(certificateDER: [UInt8], keyFromVault: [UInt8]) throws {
        for run in 1...2 {
            // example: getting-started-open

            let keychain = try Keychain.openOrCreate(at: "secrets.kcf", credential: .password("correct horse battery staple"))
            let server = try Keychain.openOrCreate(at: "server.kcf", credential: .key(SymmetricKey(data: keyFromVault)))
            // example end
            #expect(keychain.count == (run == 1 ? 0 : 4) && server.count == 0)
            guard run == 1 else { break }

            // example: getting-started-passwords
            try keychain.setPassword("s3cret", forService: "mail.example.com", account: "ann")
            let password = try keychain.password(forService: "mail.example.com", account: "ann")
            let maybe = try keychain.passwordIfPresent(forService: "mail.example.com", account: "bob")   // nil
            let accounts = try keychain.accounts(forService: "mail.example.com")
            try keychain.removePasswordIfPresent(forService: "mail.example.com", account: "bob")
            // example end
            #expect(password == "s3cret" && maybe == nil && accounts == ["ann"])

            // example: getting-started-items
            try keychain.add(InternetPassword(server: "example.com", account: "ann", password: "pw", protocolType: .https))
            let certificate = try Certificate(der: certificateDER)     // subject, issuer, serial read from the DER
            try keychain.add(certificate)

            var query = Query.internetPassword(server: "example.com")
            query.limit = .one
            let found = try keychain.find(InternetPassword.self, matching: query)
            // example end
            #expect(found.count == 1 && found[0].password == "pw" && found[0].protocolType == .https)
            try keychain.add(GenericPassword(service: "fourth", account: "item", password: "x"))
        }
    }
}
