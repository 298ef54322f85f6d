import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import KeychainFile

/// Creating, opening and writing format version 2 files through `Keychain`.
enum V2Keychain {
    static var options: Keychain.CreationOptions {
        var options = TestKeychain.fastOptions
        options.formatVersion = 2
        return options
    }

    static func create(in directory: TemporaryDirectory, name: String = "v2.kcf") throws -> Keychain {
        try Keychain.create(at: directory.file(name), credential: TestKeychain.password, options: options)
    }

    static func open(_ path: String, credential: Credential = TestKeychain.password) throws -> Keychain {
        try Keychain.open(at: path, credential: credential)
    }

    /// Adds `count` generic passwords `svc`/`userN` with secret "secret N", in batches of `perBatch`.
    static func fill(_ keychain: Keychain, count: Int, perBatch: Int = 1, secretSize: Int = 0) throws -> [String: [UInt8]] {
        var expected: [String: [UInt8]] = [:]
        var index = 0
        while index < count {
            let end = min(count, index + perBatch)
            try keychain.batch { (batch) throws(KeychainError) in
                for number in index..<end {
                    var secret = Array("secret \(number)".utf8)
                    if secretSize > secret.count { secret += [UInt8](repeating: UInt8(number & 0xFF), count: secretSize - secret.count) }
                    try batch.add(GenericPassword(service: "svc", account: "user\(number)", value: secret))
                    expected["user\(number)"] = secret
                }
            }
            index = end
        }
        return expected
    }

    static func log(_ keychain: Keychain) throws -> RecordLogV2 {
        try #require(keychain.withLock { keychain.log as? RecordLogV2 })
    }
}

@Suite("Format version 2 through Keychain")
struct KeychainV2Tests {
    @Test("A new version 2 keychain keeps adds, updates and deletes across opens, and says it is version 2")
    func roundTrip() throws {
        let directory = TemporaryDirectory()
        let keychain = try V2Keychain.create(in: directory)
        var expected = try V2Keychain.fill(keychain, count: 60, perBatch: 7)
        try keychain.update(.genericPassword(service: "svc", account: "user3"), setting: [:], secret: Array("changed".utf8))
        expected["user3"] = Array("changed".utf8)
        try keychain.delete(.genericPassword(service: "svc", account: "user4"))
        expected["user4"] = nil
        #expect(try liveSecrets(keychain) == expected)
        let bytes = try fileBytes(directory.file("v2.kcf"))
        #expect(Array(bytes[8..<10]) == [0, 2])
        let reopened = try V2Keychain.open(directory.file("v2.kcf"))
        #expect(try liveSecrets(reopened) == expected)
        #expect(try genericPasswordSnapshot(reopened) == genericPasswordSnapshot(keychain))
        #expect(reopened.head == keychain.head)
        #expect(try reopened.keySlots().map(\.kind) == [.password(iterations: 1_000)])
        #expect(throws: KeychainError.wrongCredentials) { try V2Keychain.open(directory.file("v2.kcf"), credential: .password("wrong")) }
    }

    @Test("Two keychain objects on one version 2 file each see what the other commits")
    func twoWriters() throws {
        let directory = TemporaryDirectory()
        let first = try V2Keychain.create(in: directory)
        _ = try V2Keychain.fill(first, count: 5)
        let second = try V2Keychain.open(directory.file("v2.kcf"))
        try second.add(GenericPassword(service: "svc", account: "from second", password: "2"))
        try first.refresh()
        #expect(try first.find(GenericPassword.self, matching: .genericPassword(service: "svc", account: "from second")).count == 1)
        try first.delete(.genericPassword(service: "svc", account: "user0"))
        try second.refresh()
        #expect(try liveSecrets(second) == liveSecrets(first))
        #expect(second.head == first.head)
        try first.compact()
        try second.add(GenericPassword(service: "svc", account: "after compaction", password: "3"))
        try first.refresh()
        #expect(try liveSecrets(first) == liveSecrets(second))
        #expect(try liveSecrets(first).count == 6)
    }

    @Test("Compaction moves to a new epoch with the same items, keeps tombstones, and the file reopens")
    func compaction() throws {
        let directory = TemporaryDirectory()
        let keychain = try V2Keychain.create(in: directory)
        var expected = try V2Keychain.fill(keychain, count: 40)
        let deleted = try #require(keychain.search(.genericPassword(service: "svc", account: "user7"), returning: .persistentReference)[0]
            .persistentReference?.itemID)
        try keychain.delete(.genericPassword(service: "svc", account: "user7"))
        expected["user7"] = nil
        let before = try keychain.statistics()
        let result = try keychain.compact()
        #expect(result.after.epoch == before.epoch + 1)
        #expect(result.after.fileSize < before.fileSize)
        #expect(try liveSecrets(keychain) == expected)
        let reopened = try V2Keychain.open(directory.file("v2.kcf"))
        #expect(try liveSecrets(reopened) == expected)
        #expect(try V2Keychain.log(reopened).state.replayed.tombstones[deleted] != nil)
        #expect(try V2Keychain.log(reopened).state.header.rewriteEnd > 0)
    }

    @Test("Credential changes rewrite a version 2 file with committed slots")
    func credentials() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v2.kcf")
        let keychain = try V2Keychain.create(in: directory)
        let expected = try V2Keychain.fill(keychain, count: 10)
        let key = SymmetricKey(size: .bits256)
        try keychain.addCredential(.key(key), iterations: .insecureForTesting(1_000))
        #expect(try liveSecrets(V2Keychain.open(path, credential: .key(key))) == expected)
        // The slot-only change, which keeps the raw key's slot (a rotating change is refused beside it).
        try keychain.changePasswordKeepingKeys(
            from: "correct horse battery staple", to: "new password", keyDerivation: .pbkdf2(.insecureForTesting(1_000)))
        #expect(throws: KeychainError.wrongCredentials) { try V2Keychain.open(path) }
        #expect(try liveSecrets(V2Keychain.open(path, credential: .password("new password"))) == expected)
        try keychain.removeCredential(.key(key))
        #expect(throws: KeychainError.wrongCredentials) { try V2Keychain.open(path, credential: .key(key)) }
        try keychain.rotateMasterKey(credentials: [.password("rotated")], iterations: .insecureForTesting(1_000))
        #expect(try liveSecrets(V2Keychain.open(path, credential: .password("rotated"))) == expected)
        #expect(try liveSecrets(keychain) == expected)
        #expect(throws: KeychainError.self) { try keychain.removeCredential(.password("rotated")) }
    }

    @Test("A batch larger than one record is written as a transaction in parts and reads back whole")
    func transactionInParts() throws {
        let directory = TemporaryDirectory()
        let keychain = try V2Keychain.create(in: directory)
        // 20 secrets of 1 MiB: more than the 16 MiB a record may hold.
        let expected = try V2Keychain.fill(keychain, count: 20, perBatch: 20, secretSize: 1 << 20)
        let reopened = try V2Keychain.open(directory.file("v2.kcf"))
        #expect(try liveSecrets(reopened) == expected)
        #expect(reopened.head.sequence == 2)
    }

    @Test("A transaction in parts that fails after its first part leaves nothing of it, and the keychain goes on")
    func transactionInPartsFails() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v2.kcf")
        let keychain = try V2Keychain.create(in: directory)
        let kept = try V2Keychain.fill(keychain, count: 3)
        let fileSystem = FaultyFileSystem()
        let writer = try Keychain.openForTesting(at: path, fileSystem: fileSystem)
        // The first part (15 MiB) takes about 530 writes: its chunks' pieces, their parity and its slot.
        fileSystem.inject(.error(EIO), at: .write, call: 700)
        #expect(throws: KeychainError.self) {
            try writer.batch { (batch) throws(KeychainError) in
                for number in 0..<20 {
                    try batch.add(GenericPassword(service: "big", account: "\(number)", value: [UInt8](repeating: UInt8(number), count: 1 << 20)))
                }
            }
        }
        #expect(fileSystem.fired)
        fileSystem.heal()
        #expect(try liveSecrets(writer) == kept)
        #expect(try liveSecrets(V2Keychain.open(path)) == kept)
        #expect(try liveSecrets(V2Keychain.open(path), service: "big").isEmpty)
        try writer.add(GenericPassword(service: "svc", account: "after", password: "x"))
        #expect(try liveSecrets(V2Keychain.open(path)).count == kept.count + 1)
    }

    @Test("A rolled-back version 2 file is refused when a later head is pinned")
    func rollback() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v2.kcf")
        let keychain = try V2Keychain.create(in: directory)
        _ = try V2Keychain.fill(keychain, count: 3)
        let old = try fileBytes(path)
        try keychain.add(GenericPassword(service: "svc", account: "later", password: "x"))
        let pin = keychain.head
        _ = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(expectedHead: pin))
        try writeFileBytes(old, to: path)
        #expect(throws: KeychainError.rolledBack(expected: pin, found: Head(epoch: 1, sequence: 3, chainValue: []))) {
            _ = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(expectedHead: pin))
        } 
    }
}
