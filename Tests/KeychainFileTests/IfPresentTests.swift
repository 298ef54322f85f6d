import Foundation
import Testing
@testable import KeychainFile

/// Reads that return `nil` only for "not found", and removals of what may be missing as an explicit choice:
/// `passwordIfPresent`, `dataIfPresent`, `valueIfPresent`, the `[service:account:]` subscript,
/// `removePasswordIfPresent` and `deleteIfPresent`.
@Suite("If present: nil for not found, an error for everything else")
struct IfPresentTests {
    struct Token: Codable, Equatable {
        var access: String
    }

    @Test("A missing item reads as nil; a stored one as its value")
    func readsMissingAsNil() throws {
        let keychain = try Keychain.inMemory()
        #expect(try keychain.passwordIfPresent(forService: "mail", account: "ann") == nil)
        #expect(try keychain.dataIfPresent(forService: "mail", account: "ann") as [UInt8]? == nil)
        #expect(try keychain.valueIfPresent(Token.self, forService: "api", account: "me") == nil)
        #expect(try keychain[service: "mail", account: "ann"] == nil)
        try keychain.setPassword("s3cret", forService: "mail", account: "ann")
        try keychain.setValue(Token(access: "abc"), forService: "api", account: "me")
        #expect(try keychain.passwordIfPresent(forService: "mail", account: "ann") == "s3cret")
        #expect(try keychain.dataIfPresent(forService: "mail", account: "ann") == Array("s3cret".utf8))
        #expect(try keychain.valueIfPresent(Token.self, forService: "api", account: "me") == Token(access: "abc"))
        #expect(try keychain[service: "mail", account: "ann"] == "s3cret")
        // Another account of the same service, or the same account of another service, is not there.
        #expect(try keychain[service: "mail", account: "bob"] == nil)
        #expect(try keychain[service: "mail.example.com", account: "ann"] == nil)
    }

    @Test("Bytes that are not UTF-8, or JSON of another type, are errors, not nil")
    func undecodableIsAnError() throws {
        let keychain = try Keychain.inMemory()
        try keychain.setData([0xff, 0xfe], forService: "mail", account: "binary")
        expectInvalidParameter("not UTF-8") { _ = try keychain.passwordIfPresent(forService: "mail", account: "binary") }
        expectInvalidParameter("not UTF-8") { _ = try keychain[service: "mail", account: "binary"] }
        expectInvalidParameter("does not decode") { _ = try keychain.valueIfPresent(Token.self, forService: "mail", account: "binary") }
    }

    @Test("A service or account too long to be stored is an invalid parameter, not nil")
    func overLongKeyIsAnError() throws {
        let keychain = try Keychain.inMemory()
        let long = String(repeating: "s", count: ItemAttributes.maximumValueByteCount + 1)
        #expect(throws: KeychainError.invalidParameter("")) { try keychain.passwordIfPresent(forService: long, account: "ann") }
        #expect(throws: KeychainError.invalidParameter("")) { try keychain.dataIfPresent(forService: "mail", account: long) as [UInt8]? }
    }

    @Test("Wrong credentials — another process rotated the keys — are an error, not nil")
    func wrongCredentialsAreAnError() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        try keychain.setPassword("s3cret", forService: "mail", account: "ann")
        let other = try Keychain.open(at: keychain.path, credential: TestKeychain.password)
        try other.rotateMasterKey(credentials: [.password("another")], iterations: .insecureForTesting(1_000))
        #expect(throws: KeychainError.wrongCredentials) { try keychain.passwordIfPresent(forService: "mail", account: "ann") }
        #expect(throws: KeychainError.wrongCredentials) { try keychain.passwordIfPresent(forService: "mail", account: "nobody") }
        #expect(throws: KeychainError.wrongCredentials) { try keychain[service: "mail", account: "nobody"] }
        #expect(throws: KeychainError.wrongCredentials) { try keychain.removePasswordIfPresent(forService: "mail", account: "nobody") }
    }

    @Test("A read that fails with EIO while catching up is an error, not nil", arguments: [1, 2])
    func ioErrorIsAnError(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("faulty.kcf")
        let faulty = FaultyFileSystem()
        let keychain = try Keychain.createForTesting(at: path, fileSystem: faulty, options: TestKeychain.options(formatVersion: formatVersion))
        let writer = try Keychain.openForTesting(at: path, fileSystem: faulty)
        try writer.setPassword("theirs", forService: "mail", account: "bob")
        faulty.failAlways(.read)
        #expect(throws: KeychainError.io(operation: "", errno: EIO, path: "")) {
            try keychain.passwordIfPresent(forService: "mail", account: "nobody")
        }
        #expect(throws: KeychainError.io(operation: "", errno: EIO, path: "")) {
            try keychain.dataIfPresent(forService: "mail", account: "bob") as [UInt8]?
        }
        faulty.heal()
        #expect(try keychain.passwordIfPresent(forService: "mail", account: "bob") == "theirs")
    }

    @Test("Removing what is missing: deleteIfPresent and removePasswordIfPresent return 0 and false, and write nothing")
    func removingWhatIsMissing() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        try keychain.setPassword("s3cret", forService: "mail", account: "ann")
        let size = try keychain.statistics().fileSize
        #expect(try keychain.removePasswordIfPresent(forService: "mail", account: "bob") == false)
        #expect(try keychain.deleteIfPresent(.genericPassword(service: "old")) == 0)
        #expect(try keychain.statistics().fileSize == size, "removing nothing wrote a record")
        #expect(try keychain.removePasswordIfPresent(forService: "mail", account: "ann") == true)
        #expect(try keychain.passwordIfPresent(forService: "mail", account: "ann") == nil)
        try keychain.add(GenericPassword(service: "old", account: "1", password: "x"))
        try keychain.add(GenericPassword(service: "old", account: "2", password: "y"))
        #expect(try keychain.deleteIfPresent(.genericPassword(service: "old")) == 2)
        #expect(throws: KeychainError.itemNotFound) { try keychain.delete(.genericPassword(service: "old")) }
        #expect(throws: KeychainError.itemNotFound) { try keychain.removePassword(forService: "mail", account: "ann") }
    }

    @Test("In a batch, deleteIfPresent of nothing lets the rest commit; delete of nothing discards it all")
    func batchDeleteIfPresent() throws {
        let keychain = try Keychain.inMemory()
        try keychain.batch { batch in
            try batch.add(GenericPassword(service: "a", account: "1", password: "x"))
            #expect(try batch.deleteIfPresent(.genericPassword(service: "old")) == 0)
        }
        #expect(try keychain.passwordIfPresent(forService: "a", account: "1") == "x")
        #expect(throws: KeychainError.itemNotFound) {
            try keychain.batch { batch in
                try batch.add(GenericPassword(service: "a", account: "2", password: "y"))
                try batch.delete(.genericPassword(service: "old"))
            }
        }
        #expect(try keychain.passwordIfPresent(forService: "a", account: "2") == nil)
        try keychain.batch { batch in
            #expect(try batch.deleteIfPresent(.genericPassword(service: "a")) == 1)
            try batch.add(GenericPassword(service: "a", account: "1", password: "again"))
        }
        #expect(try keychain.passwordIfPresent(forService: "a", account: "1") == "again")
    }

    @Test("A read-only keychain refuses deleteIfPresent with readOnly, even when nothing matches")
    func readOnlyRefuses() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("ro.kcf")
        let faulty = FaultyFileSystem()
        _ = try Keychain.createForTesting(at: path, fileSystem: faulty)
        faulty.refuseChanges(EROFS)
        let readOnly = try Keychain.openForTesting(at: path, fileSystem: faulty)
        #expect(try readOnly.passwordIfPresent(forService: "mail", account: "ann") == nil)
        #expect(throws: KeychainError.readOnly(path: "", reason: "")) { try readOnly.removePasswordIfPresent(forService: "mail", account: "ann") }
    }
}
