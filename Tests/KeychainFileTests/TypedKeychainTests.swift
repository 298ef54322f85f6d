import Foundation
import Testing
@testable import KeychainFile

@Suite("Keychain: typed items and limits")
struct TypedKeychainTests {
    @Test("Typed add and find for every class; identities come back joined")
    func typedRoundTrip() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        var password = GenericPassword(service: "svc", account: "ann", password: "pw")
        password.label = "Label"
        try keychain.add(password)
        let found = try keychain.find(GenericPassword.self, matching: .genericPassword(service: "svc"))
        #expect(found.count == 1)
        #expect(found[0].passwordString == "pw")
        #expect(found[0].label == "Label")
        #expect(found[0].creationDate != nil)
        let withoutSecret = try keychain.find(GenericPassword.self, matching: .genericPassword(service: "svc"), loadingValues: false)
        #expect(withoutSecret[0].value == nil)
        #expect(throws: KeychainError.invalidParameter("")) {
            try keychain.find(InternetPassword.self, matching: .genericPassword(service: "svc"))
        }

        var web = InternetPassword(server: "example.org", account: "bob")
        web.value = Array("w".utf8)
        try keychain.add(web)
        #expect(try keychain.find(InternetPassword.self, matching: Query(.internetPassword))[0].server == "example.org")

        var key = Key(keyClass: .symmetric)
        key.applicationTag = [1, 2]
        key.value = [9, 9, 9]
        try keychain.add(key)
        #expect(try keychain.find(Key.self, matching: Query(.key))[0].value == [9, 9, 9])
    }

    @Test("Limits: secrets over 1 MiB and attribute values over 65,535 bytes are refused")
    func limits() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        #expect(throws: KeychainError.invalidParameter("")) {
            try keychain.add(GenericPassword(service: "s", account: "a", value: [UInt8](repeating: 1, count: 1_048_577)))
        }
        try keychain.add(GenericPassword(service: "s", account: "a", value: [UInt8](repeating: 1, count: 1_048_576)))
        #expect(throws: KeychainError.invalidParameter("")) {
            try keychain.add(GenericPassword(service: String(repeating: "x", count: 65_536), account: "a", password: "p"))
        }
        #expect(throws: KeychainError.invalidParameter("")) {
            try keychain.update(.genericPassword(service: "s"), setting: [.creationDate: .date(Date())])
        }
        let reopened = try Keychain.open(at: keychain.path, credential: TestKeychain.password)
        #expect(try reopened.search(.genericPassword(service: "s"), returning: [.data])[0].value?.count == 1_048_576)
    }

    @Test("A million items: added in ten transactions, reopened, found by service and account")
    func millionItems() throws {
        let directory = TemporaryDirectory()
        let path: String
        let written: Head
        do {
            let keychain = try TestKeychain.create(in: directory)
            path = keychain.path
            for batchIndex in 0..<10 {
                try keychain.batch { (batch) throws(KeychainError) in
                    for index in 0..<100_000 {
                        let number = batchIndex * 100_000 + index
                        try batch.add(GenericPassword(service: "service\(number % 100)", account: "account\(number)",
                                                      value: withUnsafeBytes(of: UInt64(number).bigEndian) { Array($0) }))
                    }
                }
            }
            #expect(keychain.count == 1_000_000)
            written = keychain.head
        }
        let reopened = try Keychain.open(at: path, credential: TestKeychain.password)
        #expect(reopened.count == 1_000_000)
        #expect(reopened.head == written)
        // Version 1 writes each transaction as one record; version 2 in parts of at most 16 MiB, each with its
        // own sequence number (SPEC.md §24.6).
        if reopened.fileFormatVersion == 1 { #expect(reopened.head.sequence == 10) }
        let found = try reopened.search(.genericPassword(service: "service45", account: "account987645"), returning: [.data])
        #expect(found[0].value == withUnsafeBytes(of: UInt64(987_645).bigEndian) { Array($0) })
    }
}
