// The Swift blocks of README.md that use KeychainFile, as the regions between `// example: NAME` and
// `// example end`: DocumentationExampleTests checks that each README block is its region byte for byte.
// This file imports only what the README's blocks import (and Testing), so that a block needing another
// import does not compile here either.
// example: readme-quick-start
import KeychainFile
// example end
import Testing

/// The README's examples, run as written: in a process of their own (an exit test) whose working directory
/// is a fresh temporary directory, with the default PBKDF2 cost.
@Suite("README examples")
struct ReadmeExamples {
    @Test("The quick start, the API tour, async code and the compaction section run as one program, as written")
    func quickStartTourAndCompaction() async throws {
        let directory = TemporaryDirectory()
        let certificateDER = try ExampleValues.certificateDER()
        let run = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            [path = directory.path as String, certificateDER = certificateDER as [UInt8]] in
            do {
                try ExampleSandbox.enter(path)
                let keychain = try Self.quickStartAndTour(certificateDER: certificateDER)
                // example: readme-async
                func signIn(with keychain: AsyncKeychain) async throws -> String {
                    try await keychain.password(forService: "a", account: "1")
                }
                let again = try await signIn(with: keychain.async)   // "x"
                // example end
                #expect(again == "x")
                try Self.compaction(keychain)
            } catch {
                Issue.record(error, "a README example threw")
            }
        }
        let printed = String(decoding: run?.standardOutputContent ?? [], as: UTF8.self)
        #expect(printed.contains(" items, ") && printed.contains("epoch 2"), "\(printed)")
        withExtendedLifetime(directory) {}
    }

    /// The quick start and the API tour: synchronous code, as at the top level of a program (where Swift picks
    /// the blocking calls).
    static func quickStartAndTour(certificateDER: [UInt8]) throws -> Keychain {
        let token = ExampleValues.Token(access: "abc", expires: 1_900_000_000)
        // example: readme-quick-start

        let keychain = try Keychain.openOrCreate(at: "secrets.kcf", credential: .password("correct horse battery staple"))

        try keychain.setPassword("s3cret", forService: "mail.example.com", account: "ann")
        let password = try keychain.password(forService: "mail.example.com", account: "ann")   // "s3cret"
        let nobody = try keychain[service: "mail.example.com", account: "nobody"]              // nil: not there
        // password(forService:account:) throws KeychainError.itemNotFound (OSStatus −25300) for a missing item; the
        // subscript and passwordIfPresent return nil for it, and throw for every real failure (I/O, wrong credentials).
        // example end
        #expect(password == "s3cret" && nobody == nil)
        #expect(throws: KeychainError.itemNotFound) { try keychain.password(forService: "mail.example.com", account: "nobody") }

        // example: readme-api-tour
        // Typed items with Apple's attributes; a duplicate primary key is KeychainError.duplicateItem.
        try keychain.add(GenericPassword(service: "mail.example.com", account: "bob", password: "hunter2"))
        try keychain.add(InternetPassword(server: "example.com", account: "ann", password: "pw", protocolType: .https, port: 443))
        try keychain.add(try Certificate(der: certificateDER))      // subject, issuer, serial, key hash from the DER

        // Queries: class plus attributes, match limit, what to return. Secrets are decrypted only when asked for.
        var query = Query.genericPassword(service: "mail.example.com")
        query.limit = .one
        let items = try keychain.find(GenericPassword.self, matching: query)
        let refs = try keychain.search(.genericPassword(service: "mail.example.com"), returning: .persistentReference)
        try keychain.update(.genericPassword(service: "mail.example.com", account: "bob"), setting: [.label: .string("Bob")])
        try keychain.delete(.genericPassword(service: "mail.example.com", account: "bob"))

        // Several changes as one durable record: all or none. delete throws itemNotFound when nothing matches, which
        // discards the batch; deleteIfPresent is for what may or may not be there.
        try keychain.batch { batch in
            try batch.add(GenericPassword(service: "a", account: "1", password: "x"))
            try batch.delete(.genericPassword(service: "mail.example.com", account: "ann"))
            try batch.deleteIfPresent(.genericPassword(service: "old"))
        }

        // Codable values, listing, and a keychain in memory for your own tests.
        try keychain.setValue(token, forService: "api.example.com", account: "me")
        let accounts = try keychain.accounts(forService: "mail.example.com")
        let scratch = try Keychain.inMemory()
        // example end
        #expect(items.count == 1 && items[0].account == "ann" && items[0].password == "s3cret")
        #expect(refs.count == 2)
        #expect(accounts.isEmpty)
        #expect(try keychain.password(forService: "a", account: "1") == "x")
        #expect(try keychain.value(ExampleValues.Token.self, forService: "api.example.com", account: "me") == token)
        #expect(try keychain.find(InternetPassword.self, matching: .internetPassword(server: "example.com"))[0].port == 443)
        #expect(try keychain.find(Certificate.self, matching: Query(.certificate)).count == 1)
        #expect(scratch.count == 0)
        return keychain
    }

    /// The compaction section, synchronous as at the top level of a program; it prints the statistics.
    static func compaction(_ keychain: Keychain) throws {
        // example: readme-compaction
        // The file is append-only; compaction rewrites it with only the live items (atomically: a crash leaves the
        // old file or the new one). Commits also compact on their own once half of a file of ≥ 1 MiB is dead.
        let result = try keychain.compact()
        print(try keychain.statistics())          // items, live bytes, dead bytes, file size, epoch

        // Credential changes rewrite the file the same way: old or new credentials open it, never neither. A password
        // change also makes a new master key: an old copy of the file and the old password read nothing added after it.
        try keychain.changePassword(from: "correct horse battery staple", to: "a longer passphrase")
        try keychain.addCredential(.key(SymmetricKey(size: .bits256)))          // e.g. a recovery key
        try keychain.rotateMasterKey(credentials: [.password("a longer passphrase")])

        // Rollback detection: keep the head somewhere an attacker cannot write, and pin it when opening.
        let pinned = keychain.head.description         // "epoch.sequence.chain"; Head(_:) reads it back or throws
        let reopened = try Keychain.open(at: "secrets.kcf", credential: .password("a longer passphrase"),
                                         options: .init(expectedHead: try Head(pinned)))

        // Damage that parity cannot repair fails the open (a failed read is an error, never an empty keychain). Read
        // every item that still authenticates, read-only, with what was lost listed; copy them out; or repair in place,
        // keeping a copy.
        let recovered = try Keychain.open(at: "secrets.kcf", credential: .password("a longer passphrase"),
                                          options: .init(recover: true))
        for damage in recovered.recovery?.damage ?? [] { print(damage) }   // offset, item id where known, what is lost
        let report = try Keychain.salvage(from: "secrets.kcf", credential: .password("a longer passphrase"),
                                          to: "secrets-salvaged.kcf")
        // example end
        #expect(result.after.epoch == result.before.epoch + 1 && result.after.deadBytes < result.before.deadBytes)
        #expect(reopened.count == keychain.count && recovered.count == keychain.count)
        #expect(recovered.recovery?.damage == [])
        #expect(report.damage == nil && report.itemCount == keychain.count)
        #expect(throws: KeychainError.wrongCredentials) {
            try Keychain.open(at: "secrets.kcf", credential: .password("correct horse battery staple"))
        }
    }
}
