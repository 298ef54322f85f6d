import Foundation
import Testing
import KeychainCrypto
@testable import KeychainFile

@Suite("Credential changes (SPEC.md §15.2)")
struct CredentialChangeTests {
    let fast = PasswordIterations.insecureForTesting(1_000)

    func keychainWithItems(_ directory: TemporaryDirectory) throws -> Keychain {
        let keychain = try TestKeychain.create(in: directory)
        for index in 0..<5 { try keychain.add(GenericPassword(service: "svc", account: "user\(index)", password: "pw\(index)")) }
        return keychain
    }

    var expectedSecrets: [String: [UInt8]] {
        Dictionary(uniqueKeysWithValues: (0..<5).map { ("user\($0)", Array("pw\($0)".utf8)) })
    }

    @Test("Changing the password: the old one stops opening the file, the new one opens it, items intact")
    func changePassword() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try keychainWithItems(directory)
        try keychain.changeCredential(from: TestKeychain.password, to: .password("a new password"), iterations: fast)
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: path, credential: TestKeychain.password) }
        #expect(try liveSecrets(try Keychain.open(at: path, credential: .password("a new password"))) == expectedSecrets)
        #expect(try liveSecrets(keychain) == expectedSecrets)
        #expect(try keychain.keySlots().count == 1)
        // A wrong "old" password changes nothing.
        #expect(throws: KeychainError.wrongCredentials) {
            try keychain.changePassword(from: "not it", to: "whatever", iterations: fast)
        }
        #expect(try liveSecrets(try Keychain.open(at: path, credential: .password("a new password"))) == expectedSecrets)
    }

    @Test("A credential that opens the keychain already is not added again: removing it would leave its twin",
          arguments: [1, 2])
    func duplicateRefused(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let key = Credential.key(SymmetricKey(data: [UInt8](repeating: 0x4B, count: 32)))
        let keychain = try TestKeychain.create(in: directory, formatVersion: formatVersion)
        try keychain.addCredential(key, iterations: fast)
        let bytes = try fileBytes(directory.file("test.kcf"))
        for credential in [TestKeychain.password, key] {
            #expect(throws: KeychainError.self) { try keychain.addCredential(credential, iterations: fast) }
        }
        #expect(try keychain.keySlots().count == 2)
        #expect(try fileBytes(directory.file("test.kcf")) == bytes, "a refused change writes nothing")
        // Another password is still added.
        try keychain.addCredential(.password("another one"), iterations: fast)
        #expect(try keychain.keySlots().count == 3)
    }

    @Test("Adding and removing key slots; the last slot cannot be removed")
    func slots() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try keychainWithItems(directory)
        let recoveryKey = SymmetricKey(size: .bits256)
        let added = try keychain.addCredential(.key(recoveryKey))
        #expect(added.kind == .rawKey)
        try keychain.addCredential(.password("second password"), iterations: fast)
        #expect(try keychain.keySlots().map(\.kind) == [.password(iterations: 1_000), .rawKey, .password(iterations: 1_000)])
        for credential in [TestKeychain.password, .key(recoveryKey), .password("second password")] {
            #expect(try liveSecrets(try Keychain.open(at: path, credential: credential)) == expectedSecrets)
        }

        try keychain.removeCredential(TestKeychain.password)
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: path, credential: TestKeychain.password) }
        #expect(throws: KeychainError.wrongCredentials) { try keychain.removeCredential(TestKeychain.password) }
        try keychain.removeKeySlot(id: added.id)
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: path, credential: .key(recoveryKey)) }
        #expect(throws: KeychainError.itemNotFound) { try keychain.removeKeySlot(id: added.id) }
        expectInvalidParameter("last key slot") { try keychain.removeCredential(.password("second password")) }
        let last = try #require(try keychain.keySlots().first)
        expectInvalidParameter("last key slot") { try keychain.removeKeySlot(id: last.id) }
        #expect(try liveSecrets(try Keychain.open(at: path, credential: .password("second password"))) == expectedSecrets)
    }

    @Test("Slot limits: at most 16 slots")
    func limits() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        for _ in 1..<16 { try keychain.addCredential(.key(SymmetricKey(size: .bits256))) }
        #expect(throws: KeychainError.limitReached("")) { try keychain.addCredential(.key(SymmetricKey(size: .bits256))) }
        #expect(try keychain.keySlots().count == 16)
        expectInvalidParameter("empty") { try keychain.addCredential(.password(""), iterations: fast) }
    }

    @Test("Rotating the master key: only the given credentials open the file; every secret is sealed anew")
    func rotate() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try keychainWithItems(directory)
        let other = try Keychain.open(at: path, credential: TestKeychain.password)
        let oldMaster = keychain.log.masterKey
        let newKey = SymmetricKey(size: .bits256)
        try keychain.rotateMasterKey(credentials: [TestKeychain.password, .key(newKey)], iterations: fast)
        #expect(keychain.log.masterKey != oldMaster)
        // The new secret boxes it read back verified under the new key: the object needs no reload.
        #expect(try !keychain.log.hasChanged())
        #expect(try liveSecrets(try Keychain.open(at: path, credential: .key(newKey))) == expectedSecrets)
        // Another object opened with a credential that still opens the file goes on after reloading.
        #expect(try liveSecrets(other) == expectedSecrets)

        let third = try Keychain.open(at: path, credential: .key(newKey))
        try keychain.rotateMasterKey(credentials: [.password("only this")], iterations: fast)
        #expect(throws: KeychainError.wrongCredentials) { try third.refresh() }
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: path, credential: TestKeychain.password) }
        #expect(try liveSecrets(try Keychain.open(at: path, credential: .password("only this"))) == expectedSecrets)
        expectInvalidParameter("at least one credential") { try keychain.rotateMasterKey(credentials: []) }
    }

    @Test("A credential change that fails at any step leaves the old credentials working, or the new ones",
          arguments: [FaultyFileSystem.Operation.createExclusive, .write, .sync, .rename, .syncDirectory])
    func failures(at operation: FaultyFileSystem.Operation) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let fileSystem = FaultyFileSystem()
        let keychain = try Keychain.createForTesting(at: path, fileSystem: fileSystem)
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "secret"))
        fileSystem.fail(operation)
        #expect(throws: KeychainError.self) {
            try keychain.changeCredential(from: TestKeychain.password, to: .password("new"), iterations: fast)
        }
        fileSystem.heal()
        let oldOpens = (try? Keychain.open(at: path, credential: TestKeychain.password)) != nil
        let newOpens = (try? Keychain.open(at: path, credential: .password("new"))) != nil
        #expect(oldOpens != newOpens, "exactly one of the old and new passwords opens the file")
        #expect(newOpens == (operation == .syncDirectory))
        let opener: Credential = newOpens ? .password("new") : TestKeychain.password
        #expect(try liveSecrets(try Keychain.open(at: path, credential: opener)) == ["a": Array("secret".utf8)])
        #expect(try liveSecrets(keychain) == ["a": Array("secret".utf8)])
    }
}

@Suite("Rollback pinning (SPEC.md §15.4)")
struct RollbackTests {
    func copy(_ path: String) throws -> [UInt8] { try fileBytes(path) }

    /// Puts `bytes` back at `path` as a restore from backup would: a new file renamed into place.
    func restore(_ bytes: [UInt8], at path: String) throws {
        try writeFileBytes(bytes, to: path + ".restore")
        _ = rename(path + ".restore", path)
    }

    @Test("An older copy, a cut-short file and a fork are refused against a pinned head; newer files are not")
    func pinned() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        // Version 1, whatever the default: its file cut short is a rollback; version 2's is damage (SPEC.md §25.5).
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "1"))
        let older = try copy(path)
        try keychain.add(GenericPassword(service: "svc", account: "b", password: "2"))
        let pin = keychain.head
        let pinned = Keychain.OpenOptions(expectedHead: pin)
        #expect(try Keychain.open(at: path, credential: TestKeychain.password, options: pinned).count == 2)

        // A newer file contains the pin: more records, then a compaction.
        try keychain.add(GenericPassword(service: "svc", account: "c", password: "3"))
        #expect(try Keychain.open(at: path, credential: TestKeychain.password, options: pinned).count == 3)
        let beforeCompaction = try copy(path)
        try keychain.compact()
        #expect(try Keychain.open(at: path, credential: TestKeychain.password, options: pinned).count == 3)

        // An older copy: refused with the pin, accepted without it.
        try restore(older, at: path)
        #expect(throws: KeychainError.rolledBack(expected: pin, found: pin)) {
            try Keychain.open(at: path, credential: TestKeychain.password, options: pinned)
        }
        #expect(try Keychain.open(at: path, credential: TestKeychain.password).count == 1)

        // An older epoch than the pin.
        try restore(beforeCompaction, at: path)
        let epochTwoPin = Keychain.OpenOptions(expectedHead: Head(epoch: 2, sequence: 0, chainValue: pin.chainValue))
        #expect(throws: KeychainError.rolledBack(expected: pin, found: pin)) {
            try Keychain.open(at: path, credential: TestKeychain.password, options: epochTwoPin)
        }

        // A fork: the same sequence number reached through another record.
        try restore(older, at: path)
        let fork = try Keychain.open(at: path, credential: TestKeychain.password)
        try fork.add(GenericPassword(service: "svc", account: "other", password: "x"))
        #expect(fork.head.sequence == pin.sequence && fork.head.chainValue != pin.chainValue)
        #expect(throws: KeychainError.rolledBack(expected: pin, found: pin)) {
            try Keychain.open(at: path, credential: TestKeychain.password, options: pinned)
        }

        // The last record cut off (it would otherwise open as a shorter, valid file).
        try restore(beforeCompaction, at: path)
        let records = recordOffsets(of: beforeCompaction)
        try restore(Array(beforeCompaction[0..<records[records.count - 1].lowerBound]), at: path)
        let lastPin = Keychain.OpenOptions(expectedHead: Head(epoch: 1, sequence: 3, chainValue: Array(beforeCompaction.suffix(16))))
        #expect(throws: KeychainError.rolledBack(expected: pin, found: pin)) {
            try Keychain.open(at: path, credential: TestKeychain.password, options: lastPin)
        }
    }

    @Test("An open keychain refuses a file put back older than what it has seen")
    func liveObject() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        // Version 1, whatever the default: the lock file's acknowledgement (SPEC.md §16.1) and a cut to an older
        // length are version 1's; version 2 writes no acknowledgement and its parity mends a short cut.
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "1"))
        let older = try copy(path)
        try keychain.add(GenericPassword(service: "svc", account: "b", password: "2"))
        try restore(older, at: path)
        #expect(throws: KeychainError.rolledBack(expected: keychain.head, found: keychain.head)) { try keychain.refresh() }
        #expect(throws: KeychainError.rolledBack(expected: keychain.head, found: keychain.head)) {
            try keychain.add(GenericPassword(service: "svc", account: "c", password: "3"))
        }
        // A fresh open refuses the older copy too: the lock file acknowledged more (SPEC.md §16.1).
        #expect(throws: KeychainError.rolledBack(expected: keychain.head, found: keychain.head)) {
            _ = try Keychain.open(at: path, credential: TestKeychain.password)
        }
        // Cut in place below what was verified: refused too. (The lock file's acknowledgement is removed, as
        // someone who restored the older copy on purpose would, so that `other` can start from it.)
        try restore(try copy(path), at: path)
        try FileManager.default.removeItem(atPath: path + ".lock")
        let other = try Keychain.open(at: path, credential: TestKeychain.password)
        try other.add(GenericPassword(service: "svc", account: "z", password: "z"))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(older.count))
        try handle.close()
        #expect(throws: KeychainError.rolledBack(expected: other.head, found: other.head)) { try other.refresh() }
    }
}

/// Format version 1, whatever the default: the damage is put at version 1's record offsets, and its torn-tail
/// rules and the lock file's acknowledgement apply; version 2's salvage is in KeychainV2SalvageTests.
@Suite("Salvage (SPEC.md §17)")
struct SalvageTests {
    @Test("Salvage keeps every item that authenticates, records after the damage too, and reports what it lost")
    func salvage() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "1"))
        try keychain.batch { batch throws(KeychainError) in
            try batch.add(GenericPassword(service: "svc", account: "b", password: "2"))
            try batch.add(GenericPassword(service: "svc", account: "c", password: "3"))
        }
        try keychain.add(GenericPassword(service: "svc", account: "d", password: "4"))
        var bytes = try fileBytes(path)
        let records = recordOffsets(of: bytes)
        #expect(records.count == 3)
        bytes[records[1].lowerBound + 40] ^= 0x10
        try writeFileBytes(bytes, to: path)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try Keychain.open(at: path, credential: TestKeychain.password) }

        let report = try Keychain.salvage(from: path, credential: TestKeychain.password, to: directory.file("saved.kcf"))
        // The flip hits the first entry of the transaction (b): c and the record after it (d) are kept.
        #expect(report.itemCount == 3 && report.recordsKept == 3)
        let damage = try #require(report.damage)
        #expect(report.damages.count == 1 && damage.loss == .item)
        #expect(records[1].contains(damage.offset))
        #expect(damage.itemID == nil, "b's attributes box is hit: a new item, whose id nothing else names")
        #expect(report.droppedByteCount == 0)
        #expect(try fileBytes(path) == bytes, "the damaged file is not changed")
        let saved = try Keychain.open(at: directory.file("saved.kcf"), credential: TestKeychain.password)
        #expect(try liveSecrets(saved) == ["a": Array("1".utf8), "c": Array("3".utf8), "d": Array("4".utf8)])
        #expect(saved.head == report.newHead && saved.head.epoch == 2)
        #expect(report.keptHead.sequence == 3)
    }

    @Test("Salvage of a whole file or a torn tail keeps everything; it refuses wrong credentials and an existing target")
    func wholeAndTorn() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "1"))
        try keychain.add(GenericPassword(service: "svc", account: "b", password: "2"))
        let whole = try Keychain.salvage(from: path, credential: TestKeychain.password, to: directory.file("whole.kcf"))
        #expect(whole.damage == nil && whole.tornTail == nil && whole.itemCount == 2 && whole.droppedByteCount == 0)

        let bytes = try fileBytes(path)
        try writeFileBytes(Array(bytes.dropLast(5)), to: path)
        // The lock file acknowledged the cut record: it is reported as damage.
        let cut = try Keychain.salvage(from: path, credential: TestKeychain.password, to: directory.file("cut.kcf"))
        #expect(cut.damage != nil && cut.itemCount == 1 && cut.droppedByteCount > 0)
        // Without the lock file, the cut record is a crash remnant.
        try FileManager.default.removeItem(atPath: path + ".lock")
        let torn = try Keychain.salvage(from: path, credential: TestKeychain.password, to: directory.file("torn.kcf"))
        #expect(torn.damage == nil && torn.tornTail != nil && torn.itemCount == 1 && torn.recordsKept == 1)
        #expect(try liveSecrets(try Keychain.open(at: directory.file("torn.kcf"), credential: TestKeychain.password)) == ["a": Array("1".utf8)])

        #expect(throws: KeychainError.wrongCredentials) {
            try Keychain.salvage(from: path, credential: .password("wrong"), to: directory.file("x.kcf"))
        }
        expectInvalidParameter("already exists") {
            _ = try Keychain.salvage(from: path, credential: TestKeychain.password, to: directory.file("torn.kcf"))
        }
    }
}
