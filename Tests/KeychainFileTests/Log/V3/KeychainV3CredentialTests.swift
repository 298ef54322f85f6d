import Foundation
import Testing
@testable import KeychainFile
@_spi(KeychainFileInternals) import KeychainCrypto

/// Credential changes of a version 3 file (Docs/FormatVersion3.md §2.7): a password change renews every key and
/// grants the new keys to the other credentials, so an old copy of the file with an old credential reads nothing
/// written after it; adding, replacing and removing credentials.
@Suite("Format version 3: credential changes")
struct KeychainV3CredentialTests {
    static let cheap = PasswordKeyDerivation.pbkdf2(.insecureForTesting(1_000))

    /// The keys an old copy of the file yields to `credential`: its log key and its default group's keys.
    static func keys(ofCopy bytes: [UInt8], credential: Credential) throws -> (logKey: SymmetricKey, group: GroupKeysV3) {
        let opened = try OpenedHeaderV3(
            read: { (offset, count) throws(KeychainError) in Array(bytes[min(offset, bytes.count)..<min(bytes.count, offset + count)]) },
            credential: credential)
        let table = try #require(opened.keyTable)
        let group = try #require(table.groups.first { $0.keyID == 1 })
        return (opened.slot.keys.logKey, try GroupKeysV3(groupKey: group.key, fileID: opened.header.fileID, keyID: 1))
    }

    /// Whether any secret box of `keychain`'s items opens under `group` (an old generation's keys).
    static func anySecretOpens(_ keychain: Keychain, under group: GroupKeysV3) -> Bool {
        let items = keychain.withLock { keychain.index.itemsInAddedOrder() }
        return items.contains { item in
            let box = Array(item.secret.box)
            return (try? GroupPageV3.openSecret(0..<box.count, of: item.id, in: box, keys: group)) != nil
        }
    }

    @Test("A password change beside a raw-key credential renews every key, grants them to the raw key, and locks out the old copy")
    func passwordChangeRotates() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        let key = SymmetricKey(size: .bits256)
        try keychain.addCredential(.key(key), keyDerivation: Self.cheap)
        var expected = try V2Keychain.fill(keychain, count: 20)
        let oldCopy = try fileBytes(path)
        let old = try Self.keys(ofCopy: oldCopy, credential: TestKeychain.password)
        #expect(Self.anySecretOpens(keychain, under: old.group))

        // Versions 1 and 2 refuse this beside another slot; version 3 grants the new keys to it.
        try keychain.changePassword(from: "correct horse battery staple", to: "new password", keyDerivation: Self.cheap)
        try keychain.add(GenericPassword(service: "svc", account: "after", password: "written after the change"))
        expected["after"] = Array("written after the change".utf8)
        #expect(try liveSecrets(keychain) == expected)
        #expect(throws: KeychainError.wrongCredentials) { _ = try V3Keychain.open(path) }
        #expect(try liveSecrets(V3Keychain.open(path, credential: .password("new password"))) == expected)
        let byKey = try V3Keychain.open(path, credential: .key(key))
        #expect(try liveSecrets(byKey) == expected)
        #expect(try byKey.keySlots().count == 2)

        // The old copy with the old password yields old keys: none opens the new header or any secret written since.
        let new = try Self.keys(ofCopy: try fileBytes(path), credential: .key(key))
        #expect(old.logKey != new.logKey)
        #expect(!Self.anySecretOpens(keychain, under: old.group))
        #expect(!Self.anySecretOpens(byKey, under: old.group))
        #expect(Self.anySecretOpens(byKey, under: new.group))
        // The old copy itself still opens with the old password, as any copy does.
        try writeFileBytes(oldCopy, to: directory.file("old.kcf"))
        #expect(try liveSecrets(V3Keychain.open(directory.file("old.kcf"))).count == 20)
    }

    @Test("Another process that opened with the raw key follows a password change made elsewhere, through its grant")
    func otherProcessFollowsRotation() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        let key = SymmetricKey(size: .bits256)
        try keychain.addCredential(.key(key), keyDerivation: Self.cheap)
        _ = try V2Keychain.fill(keychain, count: 3)
        let other = try V3Keychain.open(path, credential: .key(key))
        try keychain.changePassword(from: "correct horse battery staple", to: "new password", keyDerivation: Self.cheap)
        try keychain.add(GenericPassword(service: "svc", account: "after", password: "x"))
        try other.refresh()
        #expect(try liveSecrets(other) == liveSecrets(keychain))
        try other.add(GenericPassword(service: "svc", account: "from other", password: "y"))
        try keychain.refresh()
        #expect(try liveSecrets(keychain).count == 5)
    }

    @Test("Adding, replacing keeping keys, rotating to a set, and removing credentials of a version 3 file")
    func credentialChanges() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        let expected = try V2Keychain.fill(keychain, count: 10)
        let added = try keychain.addCredential(.password("second"), keyDerivation: Self.cheap)
        #expect(try keychain.keySlots().map(\.id).contains(added.id))
        #expect(try liveSecrets(V3Keychain.open(path, credential: .password("second"))) == expected)
        #expect(throws: KeychainError.invalidParameter("")) { _ = try keychain.addCredential(.password("second"), keyDerivation: Self.cheap) }

        // The slot-only change keeps the keys: documented as not protecting against an old copy.
        let beforeKeeping = try Self.keys(ofCopy: try fileBytes(path), credential: .password("second"))
        try keychain.changePasswordKeepingKeys(from: "second", to: "second, changed", keyDerivation: Self.cheap)
        #expect(throws: KeychainError.wrongCredentials) { _ = try V3Keychain.open(path, credential: .password("second")) }
        let afterKeeping = try Self.keys(ofCopy: try fileBytes(path), credential: .password("second, changed"))
        #expect(beforeKeeping.logKey == afterKeeping.logKey)
        #expect(try keychain.keySlots().map(\.id).contains(added.id))

        // Removing a credential renews the keys: its old copy's keys open nothing written since.
        let removedCopy = try fileBytes(path)
        try keychain.removeCredential(.password("second, changed"))
        #expect(throws: KeychainError.wrongCredentials) { _ = try V3Keychain.open(path, credential: .password("second, changed")) }
        #expect(try keychain.keySlots().count == 1)
        let removedKeys = try Self.keys(ofCopy: removedCopy, credential: .password("second, changed"))
        #expect(!Self.anySecretOpens(keychain, under: removedKeys.group))
        #expect(try liveSecrets(V3Keychain.open(path)) == expected)

        // Its own slot is not removed, nor the last one.
        let bytes = try fileBytes(path)
        #expect(throws: KeychainError.invalidParameter("")) { try keychain.removeCredential(TestKeychain.password) }
        #expect(try fileBytes(path) == bytes)

        try keychain.rotateMasterKey(credentials: [.password("a"), .password("b")], keyDerivation: Self.cheap)
        #expect(throws: KeychainError.wrongCredentials) { _ = try V3Keychain.open(path) }
        #expect(try liveSecrets(V3Keychain.open(path, credential: .password("a"))) == expected)
        #expect(try liveSecrets(V3Keychain.open(path, credential: .password("b"))) == expected)
        #expect(try liveSecrets(keychain) == expected)
        try keychain.removeKeySlot(id: try #require(keychain.keySlots().last?.id))
        #expect(throws: KeychainError.wrongCredentials) { _ = try V3Keychain.open(path, credential: .password("b")) }
    }
}
