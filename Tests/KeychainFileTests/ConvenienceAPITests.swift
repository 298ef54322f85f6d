import Foundation
import Testing
@testable import KeychainFile

@Suite("Everyday API: passwords by service and account, Codable values, in-memory keychains")
struct ConvenienceAPITests {
    @Test("setPassword adds or replaces; password reads; a missing one is itemNotFound, never nil")
    func passwords() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        #expect(throws: KeychainError.itemNotFound) { try keychain.password(forService: "mail", account: "ann") }
        try keychain.setPassword("first", forService: "mail", account: "ann")
        try keychain.setPassword("second", forService: "mail", account: "ann")
        try keychain.setPassword("other", forService: "mail", account: "bob")
        #expect(try keychain.password(forService: "mail", account: "ann") == "second")
        #expect(keychain.count == 2, "setPassword replaced the secret instead of adding a second item")
        #expect(try keychain.accounts(forService: "mail") == ["ann", "bob"])
        #expect(try keychain.accounts(forService: "nothing here") == [])
        try keychain.setData([0xff, 0xfe], forService: "mail", account: "binary")
        expectInvalidParameter("not UTF-8") { _ = try keychain.password(forService: "mail", account: "binary") }
        #expect(try keychain.data(forService: "mail", account: "binary") == [0xff, 0xfe])
        try keychain.removePassword(forService: "mail", account: "ann")
        #expect(throws: KeychainError.itemNotFound) { try keychain.removePassword(forService: "mail", account: "ann") }
        #expect(try keychain.accounts(forService: "mail") == ["bob", "binary"])
        // Durable: a fresh open sees the same.
        let reopened = try Keychain.open(at: directory.file("test.kcf"), credential: TestKeychain.password)
        #expect(try reopened.password(forService: "mail", account: "bob") == "other")
    }

    struct Token: Codable, Equatable {
        var access: String
        var scopes: [String]
        var expires: Date
    }

    @Test("Codable values round-trip as JSON; a value of another type is an error")
    func codable() throws {
        let keychain = try Keychain.inMemory()
        let token = Token(access: "abc", scopes: ["read", "write"], expires: Date(timeIntervalSince1970: 1_800_000_000))
        try keychain.setValue(token, forService: "api", account: "me")
        #expect(try keychain.value(Token.self, forService: "api", account: "me") == token)
        expectInvalidParameter("does not decode") { _ = try keychain.value([Int].self, forService: "api", account: "me") }
        #expect(throws: KeychainError.itemNotFound) { try keychain.value(Token.self, forService: "api", account: "nobody") }
    }

    @Test("batch takes a body that throws any error: a KeychainError or a foreign error discards the batch and is rethrown as is")
    func batchWithUntypedBody() throws {
        let keychain = try Keychain.inMemory()
        _ = try keychain.batch { batch in
            try batch.add(GenericPassword(service: "a", account: "1", password: "x"))
        }
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
        #expect(throws: KeychainError.itemNotFound) {
            try keychain.batch { batch in
                try batch.add(GenericPassword(service: "a", account: "4", password: "w"))
                try batch.delete(.genericPassword(service: "missing"))
            }
        }
        #expect(try keychain.accounts(forService: "a") == ["1", "2"])
    }

    @Test("An in-memory keychain has the whole API: items, compaction, credentials, statistics")
    func inMemory() throws {
        let keychain = try Keychain.inMemory()
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "1"))
        try keychain.add(InternetPassword(server: "example.com", account: "a", protocolType: .https, value: Array("2".utf8)))
        #expect(throws: KeychainError.duplicateItem) { try keychain.add(GenericPassword(service: "svc", account: "a", password: "x")) }
        try keychain.setPassword("3", forService: "svc", account: "a")
        let before = try keychain.statistics()
        #expect(before.deadBytes > 0)
        let result = try keychain.compact()
        #expect(result.after.deadBytes < before.deadBytes && result.after.epoch == 2)
        try keychain.addCredential(.password("also this"), iterations: .insecureForTesting(1_000))
        #expect(try keychain.keySlots().count == 2)
        #expect(try keychain.password(forService: "svc", account: "a") == "3")
        #expect(keychain.count == 2)
        // Separate in-memory keychains share nothing.
        #expect(try Keychain.inMemory().count == 0)
    }

    @Test("Two keychain objects on one in-memory file system follow each other as on disk")
    func sharedMemoryFileSystem() throws {
        let fileSystem = MemoryFileSystem()
        let first = try Keychain.createForTesting(at: "/mem/k.kcf", fileSystem: fileSystem)
        let second = try Keychain.openForTesting(at: "/mem/k.kcf", fileSystem: fileSystem)
        try first.setPassword("one", forService: "svc", account: "a")
        #expect(try second.password(forService: "svc", account: "a") == "one")
        try second.compact()
        try first.setPassword("two", forService: "svc", account: "a")
        #expect(try second.password(forService: "svc", account: "a") == "two")
        #expect(first.head == second.head && first.head.epoch == 2)
        #expect(try fileSystem.contentsOfDirectory("/mem").sorted() == ["k.kcf"])
    }
}
