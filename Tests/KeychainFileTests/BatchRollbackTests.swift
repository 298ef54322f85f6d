import Foundation
import Testing
@testable import KeychainFile

/// A batch works on the keychain's own index and undoes what it staged when it fails; these tests check that
/// the undo is exact: every item, secret, search result and the order of later items as before the batch.
@Suite("Batches that fail leave the keychain exactly as it was")
struct BatchRollbackTests {
    private func seed(_ keychain: Keychain) throws {
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<20 {
                try batch.add(GenericPassword(service: "s", account: "a\(index)", password: "p\(index)"))
            }
        }
    }

    /// Updates one item, deletes two, adds one with a deleted item's primary key and two new ones, then
    /// fails in the way `failure` chooses.
    private func busyBatch(_ batch: inout Batch, then failure: () throws(KeychainError) -> Void) throws(KeychainError) {
        try batch.update(.genericPassword(service: "s", account: "a3"), setting: [.label: .string("changed")], secret: Array("new".utf8))
        try batch.delete(.genericPassword(service: "s", account: "a5"))
        try batch.delete(.genericPassword(service: "s", account: "a6"))
        try batch.add(GenericPassword(service: "s", account: "a5", password: "again"))
        try batch.add(GenericPassword(service: "s", account: "fresh1", password: "f1"))
        try batch.update(.genericPassword(service: "s", account: "fresh1"), setting: [.comment: .string("c")])
        try batch.add(GenericPassword(service: "s", account: "fresh2", password: "f2"))
        try failure()
    }

    @Test("A body that throws after updates, deletes and adds restores every item, secret and lookup")
    func bodyThrows() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        try seed(keychain)
        let before = try genericPasswordSnapshot(keychain)
        let head = keychain.head
        #expect(throws: KeychainError.duplicateItem) {
            try keychain.batch { (batch) throws(KeychainError) in
                try busyBatch(&batch) { () throws(KeychainError) in throw .duplicateItem }
            }
        }
        #expect(try genericPasswordSnapshot(keychain) == before)
        #expect(keychain.head == head)
        #expect(keychain.count == 20)
        // Lookups by primary key see the old items, and the deleted-then-re-added key is the old item again.
        #expect(try keychain.password(forService: "s", account: "a5") == "p5")
        #expect(try keychain.password(forService: "s", account: "a3") == "p3")
        #expect(throws: KeychainError.itemNotFound) { try keychain.password(forService: "s", account: "fresh1") }
        #expect(throws: KeychainError.duplicateItem) { try keychain.add(GenericPassword(service: "s", account: "a6", password: "x")) }

        // New items after the failure come after the old ones, as if the failed batch never ran.
        try keychain.add(GenericPassword(service: "s", account: "later", password: "l"))
        let accounts = try keychain.accounts(forService: "s")
        #expect(accounts.last == "later")
        #expect(accounts.count == 21)
        let reopened = try Keychain.open(at: keychain.path, credential: TestKeychain.password)
        #expect(try genericPasswordSnapshot(reopened) == genericPasswordSnapshot(keychain))
    }

    @Test("A commit whose write fails restores the items; the keychain keeps working")
    func commitFails() throws {
        let directory = TemporaryDirectory()
        let faulty = FaultyFileSystem()
        let path = directory.file("faulty.kcf")
        let keychain = try Keychain.create(
            at: path, credential: TestKeychain.password, options: TestKeychain.fastOptions,
            random: RandomSource(SystemRandomNumberGenerator()), clock: { Date() }, fileSystem: faulty)
        try seed(keychain)
        let before = try genericPasswordSnapshot(keychain)
        faulty.fail(.write)
        #expect(throws: KeychainError.self) {
            try keychain.batch { (batch) throws(KeychainError) in try busyBatch(&batch) { () throws(KeychainError) in } }
        }
        #expect(faulty.fired)
        faulty.heal()
        #expect(try genericPasswordSnapshot(keychain) == before)
        try keychain.batch { (batch) throws(KeychainError) in try busyBatch(&batch) { () throws(KeychainError) in } }
        #expect(try keychain.password(forService: "s", account: "a3") == "new")
        #expect(try keychain.password(forService: "s", account: "a5") == "again")
        let reopened = try Keychain.open(at: path, credential: TestKeychain.password)
        #expect(try genericPasswordSnapshot(reopened) == genericPasswordSnapshot(keychain))
    }
}
