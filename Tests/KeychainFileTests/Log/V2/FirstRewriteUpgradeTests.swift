import Foundation
import Testing
@testable import KeychainFile
import KeychainCrypto

/// Which version the library writes (SPEC.md §12): new files are version 2; a version 1 file stays version 1 until
/// its first rewrite — compaction, asked for or automatic, or a credential change — which writes version 2, unless
/// ``Keychain/keepsFormatVersion`` is set. The version is read from the file's bytes 8–9 (§12), not from the library.
@Suite("Format version 2: new files, and the first rewrite of a version 1 file")
struct FirstRewriteUpgradeTests {
    static let rawKey = Credential.key(SymmetricKey(data: (0..<32).map { UInt8(0x40 + $0) }))

    /// The format version field of the file at `path` (bytes 8–9, big-endian).
    func versionOnDisk(_ path: String) throws -> Int {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(10))
        return Int(bytes[8]) << 8 | Int(bytes[9])
    }

    /// A version 1 keychain with a password slot and a raw-key slot, and items added, updated and deleted.
    func versionOne(_ path: String, autoCompaction: AutoCompaction = .disabled) throws -> Keychain {
        var options = TestKeychain.versionOneOptions
        options.additionalCredentials = [Self.rawKey]
        options.autoCompaction = autoCompaction
        options.keepsFormatVersion = false
        let keychain = try Keychain.create(at: path, credential: TestKeychain.password, options: options)
        for index in 0..<12 {
            try keychain.add(GenericPassword(service: "svc", account: "user\(index)", password: "secret \(index)"))
        }
        try keychain.update(.genericPassword(service: "svc", account: "user3"), setting: [.label: .string("changed")], secret: Array("new".utf8))
        try keychain.delete(.genericPassword(service: "svc", account: "user4"))
        try #require(try versionOnDisk(path) == 1)
        return keychain
    }

    @Test("New files are version 2 by default; formatVersion 1 still makes version 1; version 3 only when asked (KeychainV3Tests); another version is refused and makes no file")
    func newFiles() throws {
        let directory = TemporaryDirectory()
        #expect(Keychain.formatVersion == 2)
        let byDefault = try Keychain.create(at: directory.file("default.kcf"), credential: TestKeychain.password, options: TestKeychain.fastOptions)
        #expect(try versionOnDisk(directory.file("default.kcf")) == 2)
        #expect(byDefault.fileFormatVersion == 2)
        _ = try Keychain.create(at: directory.file("one.kcf"), credential: TestKeychain.password, options: TestKeychain.versionOneOptions)
        #expect(try versionOnDisk(directory.file("one.kcf")) == 1)
        for version in [0, 4, -1] {
            var options = TestKeychain.fastOptions
            options.formatVersion = version
            #expect(throws: KeychainError.self) {
                try Keychain.create(at: directory.file("v\(version).kcf"), credential: TestKeychain.password, options: options)
            }
            #expect(!FileManager.default.fileExists(atPath: directory.file("v\(version).kcf")))
        }
    }

    @Test("compact() rewrites a version 1 file as version 2 with the same items, and both credentials open it")
    func compactionUpgrades() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v1.kcf")
        let keychain = try versionOne(path)
        let before = try genericPasswordSnapshot(keychain)
        try keychain.compact()
        #expect(try versionOnDisk(path) == 2)
        #expect(keychain.fileFormatVersion == 2)
        #expect(try genericPasswordSnapshot(keychain) == before)
        for credential in [TestKeychain.password, Self.rawKey] {
            #expect(try genericPasswordSnapshot(Keychain.open(at: path, credential: credential)) == before)
        }
        // A second compaction is an ordinary version 2 rewrite.
        let epoch = try keychain.statistics().epoch
        try keychain.compact()
        #expect(try keychain.statistics().epoch == epoch + 1)
        #expect(try versionOnDisk(path) == 2)
    }

    @Test("The upgrade withdraws version 1's acknowledgement from the lock file, and later commits write none")
    func acknowledgementWithdrawn() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v1.kcf")
        let keychain = try versionOne(path)
        func block() throws -> [UInt8] {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path + ".lock")))
            return Array(bytes.dropFirst(Acknowledgement.offset).prefix(Acknowledgement.magic.count))
        }
        #expect(try block() == Acknowledgement.magic, "version 1 acknowledges its commits")
        try keychain.upgradeFormat()
        #expect(try block() != Acknowledgement.magic)
        let lockBytes = try Data(contentsOf: URL(fileURLWithPath: path + ".lock"))
        try keychain.add(GenericPassword(service: "svc", account: "after", password: "x"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + ".lock")).dropFirst(Acknowledgement.offset)
                == lockBytes.dropFirst(Acknowledgement.offset))
    }

    @Test("A credential change on a version 1 file writes version 2 and makes the change in one rewrite: the old password no longer opens it")
    func credentialChangeUpgrades() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v1.kcf")
        let keychain = try versionOne(path)
        let before = try genericPasswordSnapshot(keychain)
        let epoch = try keychain.statistics().epoch
        // The raw-key slot stays: the slot-only change (a rotating one is refused beside another slot).
        try keychain.changePasswordKeepingKeys(from: "correct horse battery staple", to: "a new horse", keyDerivation: .pbkdf2(.insecureForTesting(1_000)))
        #expect(try versionOnDisk(path) == 2)
        #expect(try keychain.statistics().epoch == epoch + 1)
        #expect(try genericPasswordSnapshot(Keychain.open(at: path, credential: .password("a new horse"))) == before)
        #expect(try genericPasswordSnapshot(Keychain.open(at: path, credential: Self.rawKey)) == before)
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: path, credential: TestKeychain.password) }
    }

    @Test("A credential change that is refused leaves a version 1 file as it was: version 1, not upgraded",
          arguments: ["wrong old password", "password change beside another slot", "empty new password", "unknown slot id",
                      "rotation to no credential", "last slot removed"])
    func refusedChangeDoesNotUpgrade(change: String) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v1.kcf")
        let keychain = try versionOne(path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: KeychainError.self) {
            switch change {
            case "wrong old password": try keychain.changePasswordKeepingKeys(from: "not the password", to: "new password")
            case "password change beside another slot":
                try keychain.changePassword(from: "correct horse battery staple", to: "new password", iterations: .insecureForTesting(1_000))
            case "empty new password": try keychain.addCredential(.password(""))
            case "unknown slot id": try keychain.removeKeySlot(id: [UInt8](repeating: 7, count: 16))
            case "rotation to no credential": try keychain.rotateMasterKey(credentials: [])
            default:
                try keychain.removeCredential(Self.rawKey)
                try keychain.removeCredential(TestKeychain.password)
            }
        }
        if change == "last slot removed" {
            // The first removal was made (and upgraded the file); the second, of the last slot, changed nothing.
            #expect(try versionOnDisk(path) == 2)
            #expect(try Keychain.open(at: path, credential: TestKeychain.password).count == 11)
        } else {
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
            #expect(keychain.fileFormatVersion == 1)
        }
    }

    @Test("An upgrade whose directory sync fails after the rename throws notConfirmedDurable; the file and the keychain object are version 2, and a password change made so is in force",
          arguments: [false, true])
    func directorySyncFailsAfterRename(changingPassword: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v1.kcf")
        _ = try versionOne(path)
        let fileSystem = FaultyFileSystem()
        let keychain = try Keychain.open(
            at: path, credential: TestKeychain.password, options: .init(autoCompaction: .disabled),
            random: RandomSource(SystemRandomNumberGenerator()), clock: { Date() }, fileSystem: fileSystem)
        fileSystem.fail(.syncDirectory)
        #expect(throws: KeychainError.notConfirmedDurable(operation: "", reason: "")) {
            if changingPassword {
                // The slot-only change: the file has a raw-key slot too, beside which a rotating change is refused.
                try keychain.changePasswordKeepingKeys(
                    from: "correct horse battery staple", to: "a new password", keyDerivation: .pbkdf2(.insecureForTesting(1_000)))
            } else {
                try keychain.upgradeFormat()
            }
        }
        fileSystem.heal()
        #expect(try versionOnDisk(path) == 2)
        #expect(keychain.fileFormatVersion == 2, "the object took the file it put in place")
        #expect(try keychain.password(forService: "svc", account: "user2") == "secret 2")
        let opener: Credential = changingPassword ? .password("a new password") : TestKeychain.password
        #expect(try Keychain.open(at: path, credential: opener).count == 11)
    }

    @Test("Automatic compaction of a version 1 file writes version 2; the commit that set it off is kept")
    func autoCompactionUpgrades() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v1.kcf")
        let keychain = try versionOne(path)
        try #require(try versionOnDisk(path) == 1)
        keychain.autoCompaction = AutoCompaction(deadShare: 0.01, minimumFileSize: 0)
        try keychain.delete(.genericPassword(service: "svc", account: "user5"))
        #expect(try versionOnDisk(path) == 2)
        #expect(try keychain[service: "svc", account: "user5"] == nil)
        #expect(try Keychain.open(at: path, credential: TestKeychain.password).count == 10)
    }

    @Test("keepsFormatVersion keeps version 1 through compaction, credential changes and automatic compaction; upgradeFormat() still upgrades")
    func keepsFormatVersion() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v1.kcf")
        let keychain = try versionOne(path)
        keychain.keepsFormatVersion = true
        let epoch = try keychain.statistics().epoch
        try keychain.compact()
        try keychain.addCredential(.password("second"), iterations: .insecureForTesting(1_000))
        keychain.autoCompaction = AutoCompaction(deadShare: 0.01, minimumFileSize: 0)
        try keychain.delete(.genericPassword(service: "svc", account: "user5"))
        #expect(try keychain.statistics().epoch == epoch + 3, "three rewrites")
        #expect(try versionOnDisk(path) == 1)
        #expect(try Keychain.open(at: path, credential: .password("second")).count == 10)
        #expect(try keychain.upgradeFormat())
        #expect(try versionOnDisk(path) == 2)
        // On a version 2 file the setting changes nothing.
        try keychain.compact()
        #expect(try versionOnDisk(path) == 2)
    }
}
