import Foundation
import Testing
@testable import KeychainFile
import KeychainCrypto

/// Upgrading a version 1 file to format version 2 (``Keychain/upgradeFormat()``, Docs/FormatVersion2.md §4): the same items
/// under the same references, the opening credential's slot committed, the others kept as legacy slots that
/// still open the file, and other processes moving to the new file.
@Suite("Format version 2: upgrading a version 1 file")
struct FormatUpgradeTests {
    static let rawKey = Credential.key(SymmetricKey(data: (0..<32).map { UInt8($0) }))

    /// A version 1 keychain with a password slot and a raw-key slot, items added, updated and deleted.
    func versionOne(_ directory: TemporaryDirectory) throws -> Keychain {
        var options = TestKeychain.versionOneOptions
        options.additionalCredentials = [Self.rawKey]
        let keychain = try Keychain.create(at: directory.file("v1.kcf"), credential: TestKeychain.password, options: options)
        for index in 0..<20 {
            try keychain.add(GenericPassword(service: "svc", account: "user\(index)", password: "secret \(index)"))
        }
        try keychain.update(.genericPassword(service: "svc", account: "user3"), setting: [.label: .string("changed")], secret: Array("new".utf8))
        try keychain.delete(.genericPassword(service: "svc", account: "user4"))
        #expect(keychain.fileFormatVersion == 1)
        return keychain
    }

    @Test("The upgraded file holds the same items under the same references, and both credentials open it")
    func sameItemsBothCredentials() throws {
        let directory = TemporaryDirectory()
        let keychain = try versionOne(directory)
        let before = try genericPasswordSnapshot(keychain)
        let epoch = try keychain.statistics().epoch
        #expect(try keychain.upgradeFormat())
        #expect(keychain.fileFormatVersion == 2)
        #expect(try genericPasswordSnapshot(keychain) == before)
        #expect(try keychain.statistics().epoch == epoch + 1)
        #expect(try RecordLogV2.isVersion2(PosixFileSystem().openExisting(directory.file("v1.kcf"))))
        // The password's slot is committed; the raw key's, kept as a legacy slot, still opens the file.
        let byPassword = try Keychain.open(at: directory.file("v1.kcf"), credential: TestKeychain.password)
        #expect(byPassword.fileFormatVersion == 2)
        #expect(try genericPasswordSnapshot(byPassword) == before)
        let byKey = try Keychain.open(at: directory.file("v1.kcf"), credential: Self.rawKey)
        #expect(try genericPasswordSnapshot(byKey) == before)
        #expect(throws: KeychainError.wrongCredentials) {
            _ = try Keychain.open(at: directory.file("v1.kcf"), credential: .password("not the password"))
        }
        // Writes go on in version 2; a second upgrade does nothing.
        try keychain.add(GenericPassword(service: "svc", account: "after", password: "after the upgrade"))
        #expect(try !keychain.upgradeFormat())
        #expect(try liveSecrets(Keychain.open(at: directory.file("v1.kcf"), credential: Self.rawKey))["after"] == Array("after the upgrade".utf8))
    }

    @Test("A legacy slot's credential can be replaced after the upgrade, and the new one opens the file")
    func legacySlotReplaced() throws {
        let directory = TemporaryDirectory()
        let keychain = try versionOne(directory)
        try keychain.upgradeFormat()
        let newKey = Credential.key(SymmetricKey(data: [UInt8](repeating: 7, count: 32)))
        try keychain.changeCredentialKeepingKeys(from: Self.rawKey, to: newKey, keyDerivation: .pbkdf2(.insecureForTesting(1_000)))
        #expect(throws: KeychainError.wrongCredentials) { _ = try Keychain.open(at: directory.file("v1.kcf"), credential: Self.rawKey) }
        #expect(try Keychain.open(at: directory.file("v1.kcf"), credential: newKey).count == 19)
    }

    @Test("Another process that has the version 1 file open moves to the upgraded file, reads every item and writes")
    func otherProcessFollows() throws {
        let directory = TemporaryDirectory()
        let first = try versionOne(directory)
        let second = try Keychain.open(at: directory.file("v1.kcf"), credential: Self.rawKey)
        let before = try genericPasswordSnapshot(second)
        try first.upgradeFormat()
        #expect(try genericPasswordSnapshot(second) == before)
        #expect(second.fileFormatVersion == 2)
        try second.add(GenericPassword(service: "svc", account: "second", password: "from the other process"))
        #expect(try liveSecrets(first)["second"] == Array("from the other process".utf8))
    }

    @Test("A legacy slot becomes a committed one at the first rewrite after its credential opened the file, and still opens it")
    func legacySlotConvertedAtRewrite() throws {
        let directory = TemporaryDirectory()
        let keychain = try versionOne(directory)
        try keychain.upgradeFormat()
        func slotKinds(_ keychain: Keychain) throws -> [String] {
            try V2Keychain.log(keychain).state.header.slots.map { if case .legacy = $0 { "legacy" } else { "committed" } }
        }
        #expect(try slotKinds(keychain) == ["committed", "legacy"])
        // Compacting through the password (whose slot is committed already) keeps the raw key's legacy slot.
        try keychain.compact()
        #expect(try slotKinds(keychain) == ["committed", "legacy"])
        let byKey = try Keychain.open(at: directory.file("v1.kcf"), credential: Self.rawKey)
        try byKey.compact()
        #expect(try slotKinds(byKey) == ["committed", "committed"])
        #expect(try Keychain.open(at: directory.file("v1.kcf"), credential: Self.rawKey).count == 19)
        #expect(try Keychain.open(at: directory.file("v1.kcf"), credential: TestKeychain.password).count == 19)
    }
}
