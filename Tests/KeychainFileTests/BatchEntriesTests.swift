import Foundation
import Testing
@testable import KeychainFile

/// A batch keeps its plain adds as positions in its index (``BatchEntries``) until it stages something else,
/// which makes them entries of their own first. These tests interleave the two so that every switch between
/// them is crossed, and check the record written against what was staged.
@Suite("Plain adds kept as index positions commit, and fail, exactly as staged")
struct BatchEntriesTests {
    /// Plain adds; a delete of one of them; more plain adds; an update of one of those (through its pending
    /// secret) and of an earlier one; a delete; plain adds left trailing at the commit.
    private func interleaved(_ batch: inout Batch) throws(KeychainError) {
        for index in 0..<10 { try batch.add(GenericPassword(service: "s", account: "a\(index)", password: "pa\(index)")) }
        try batch.delete(.genericPassword(service: "s", account: "a3"))
        for index in 0..<5 { try batch.add(GenericPassword(service: "s", account: "b\(index)", password: "pb\(index)")) }
        try batch.update(.genericPassword(service: "s", account: "b2"), setting: [.label: .string("changed")])
        try batch.update(.genericPassword(service: "s", account: "a8"), setting: [:], secret: Array("new a8".utf8))
        try batch.delete(.genericPassword(service: "s", account: "a7"))
        // A deleted item's primary key, free again, taken by a plain add.
        try batch.add(GenericPassword(service: "s", account: "a7", password: "a7 again"))
        for index in 0..<3 { try batch.add(GenericPassword(service: "s", account: "c\(index)", password: "pc\(index)")) }
    }

    @Test("Adds, deletes and updates of items the same batch added, in every order, commit and reopen as staged")
    func interleavedCommit() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        try keychain.add(GenericPassword(service: "s", account: "before", password: "old"))
        try keychain.batch { (batch) throws(KeychainError) in try interleaved(&batch) }

        #expect(keychain.count == 1 + 10 - 2 + 1 + 5 + 3)
        #expect(throws: KeychainError.itemNotFound) { try keychain.password(forService: "s", account: "a3") }
        #expect(try keychain.password(forService: "s", account: "a7") == "a7 again")
        #expect(try keychain.password(forService: "s", account: "a8") == "new a8")
        #expect(try keychain.password(forService: "s", account: "b2") == "pb2")
        #expect(try keychain.password(forService: "s", account: "c2") == "pc2")
        #expect(try keychain.password(forService: "s", account: "before") == "old")
        let changed = try keychain.search(.genericPassword(service: "s", account: "b2"), returning: [.attributes])
        #expect(changed.first?.attributes?[.label] == .string("changed"))
        // Search order is the order of adding, the deleted items skipped.
        let accounts = try keychain.accounts(forService: "s")
        #expect(accounts == ["before", "a0", "a1", "a2", "a4", "a5", "a6", "a8", "a9", "b0", "b1", "b2", "b3", "b4", "a7", "c0", "c1", "c2"])

        let reopened = try Keychain.open(at: keychain.path, credential: TestKeychain.password)
        #expect(try genericPasswordSnapshot(reopened) == genericPasswordSnapshot(keychain))
    }

    @Test("The same batch failing in its body or in its write leaves the keychain as it was, then commits")
    func interleavedFailures() throws {
        let directory = TemporaryDirectory()
        let faulty = FaultyFileSystem()
        let path = directory.file("faulty.kcf")
        let keychain = try Keychain.createForTesting(at: path, fileSystem: faulty)
        try keychain.add(GenericPassword(service: "s", account: "before", password: "old"))
        let before = try genericPasswordSnapshot(keychain)
        #expect(throws: KeychainError.duplicateItem) {
            try keychain.batch { (batch) throws(KeychainError) in
                try interleaved(&batch)
                throw .duplicateItem
            }
        }
        #expect(try genericPasswordSnapshot(keychain) == before)
        faulty.fail(.write)
        #expect(throws: KeychainError.self) {
            try keychain.batch { (batch) throws(KeychainError) in try interleaved(&batch) }
        }
        #expect(faulty.fired)
        faulty.heal()
        #expect(try genericPasswordSnapshot(keychain) == before)

        try keychain.batch { (batch) throws(KeychainError) in try interleaved(&batch) }
        let reopened = try Keychain.open(at: path, credential: TestKeychain.password)
        #expect(try genericPasswordSnapshot(reopened) == genericPasswordSnapshot(keychain))
        #expect(reopened.count == 18)
    }
}
