import Foundation
import Testing
@testable import KeychainFile
import KeychainCrypto

/// A password change locks out old copies of the file (issue 31): `changePassword` and `changeCredential` give the
/// keychain a new master key, so that whoever holds a copy of the file from before the change and the old
/// password — and with them the old master key — cannot read what is written after it. Each test plays that
/// attacker with the library's own internals and, as a control, shows the same attack succeeding against the
/// slot-only change (`changePasswordKeepingKeys`), which keeps the master key.
@Suite("Password change rotates the master key: an old copy and the old password read nothing written after it")
struct PasswordChangeRotationTests {
    static let fast = PasswordIterations.insecureForTesting(1_000)
    static let distinctive = "written after the change: 7f3c9e21-b0d4"

    /// How the test changes the password.
    enum Change: CustomStringConvertible {
        case rotating, keepingKeys
        var description: String { self == .rotating ? "changePassword" : "changePasswordKeepingKeys" }
    }

    /// What the attacker got out of the new file with the master key taken from the old copy: the secrets it
    /// decrypted, or the error that stopped it.
    enum Attack: Equatable {
        case read([String])
        case refused(KeychainError)
    }

    /// A keychain of `formatVersion` created with "old", an item added, its bytes copied (the old copy), the
    /// password changed to "new" by `change`, and an item added whose secret is ``distinctive``. Returns the path,
    /// the old copy and the keychain.
    /// `upgrading`: a version 1 file not kept at version 1, which the change rewrites as version 2.
    static func scenario(
        _ directory: TemporaryDirectory, formatVersion: Int, change: Change, upgrading: Bool = false
    ) throws -> (path: String, oldCopy: [UInt8], keychain: Keychain) {
        let path = directory.file("test.kcf")
        var options = TestKeychain.options(formatVersion: formatVersion)
        if upgrading { options.keepsFormatVersion = false }
        let keychain = try Keychain.create(at: path, credential: .password("old"), options: options)
        try keychain.add(GenericPassword(service: "svc", account: "before", password: "written before the change"))
        let oldCopy = try fileBytes(path)
        switch change {
        case .rotating: try keychain.changePassword(from: "old", to: "new", iterations: fast)
        case .keepingKeys: try keychain.changePasswordKeepingKeys(from: "old", to: "new", keyDerivation: .pbkdf2(fast))
        }
        try keychain.add(GenericPassword(service: "svc", account: "after", password: distinctive))
        return (path, oldCopy, keychain)
    }

    /// The attacker's master key: the old copy's header opened with the old password.
    static func stolenMasterKey(oldCopy: [UInt8], formatVersion: Int) throws -> SymmetricKey {
        if formatVersion == 1 {
            let header = try FileHeader.parse(Array(oldCopy[0..<Int(try FileHeader.Prefix(Array(oldCopy[0..<FileHeader.Prefix.size])).headerLength)]))
            return try #require(try RecordLog.unlock(header, with: .password("old")))
        }
        let pages = pages(of: oldCopy)
        return try OpenedHeaderV2(pageA: pages.a, pageB: pages.b, credential: .password("old")).masterKey
    }

    static func pages(of bytes: [UInt8]) -> (a: [UInt8], b: [UInt8]) {
        let length = HealingLayout.headerPageLength
        return (Array(bytes[0..<length]), Array(bytes[HealingLayout.headerBOffset..<(HealingLayout.headerBOffset + length)]))
    }

    /// The attack on the file at `path`: its header verified under `masterKey`, its log replayed and every secret
    /// decrypted with the keys that master key gives. No credential is tried: the attacker has only the key.
    static func attack(_ path: String, masterKey: SymmetricKey, formatVersion: Int) throws -> Attack {
        let file = try PosixFileSystem().openExisting(path)
        defer { file.close() }
        do throws(KeychainError) {
            var secrets: [[UInt8]] = []
            if formatVersion == 1 {
                let (header, headerBytes, size) = try RecordLog.readHeader(file)
                let epoch = try OpenedEpoch(header: header, headerBytes: headerBytes, masterKey: masterKey, acknowledgement: nil)
                let loaded = try RecordLog.load(file: file, epoch: epoch, size: size, pin: nil)
                for item in loaded.index.itemsInAddedOrder() {
                    secrets.append(try RecordLog.decryptSecret(item.secret, context: epoch.context))
                }
            } else {
                let pages = pages(of: try file.readExactly(count: HealingLayout.headerBOffset + HealingLayout.headerPageLength, at: 0))
                let header = try OpenedHeaderV2(pageA: pages.a, pageB: pages.b, masterKey: masterKey)
                let keys = try RecordKeysV2(
                    fileID: header.header.fileID, epoch: header.header.epoch, recordKey: header.keys.record,
                    secretKey: try RecordKeysV2.secretKey(masterKey: masterKey, fileID: header.header.fileID))
                let log = try HealingLog(
                    opening: file, headerKey: header.keys.header, epoch: header.header.epoch, rewriteEnd: Int(header.header.rewriteEnd))
                var replay = ReplayV2(
                    log: log, keys: .version2(keys), start: Head(epoch: header.header.epoch, sequence: 0, chainValue: header.initialChain),
                    rewriteHead: Head(epoch: header.header.epoch, sequence: header.header.rewriteHeadSequence, chainValue: header.header.rewriteHeadChain),
                    watching: nil)
                try replay.run()
                for item in replay.index.itemsInAddedOrder() {
                    let box = Array(item.secret.box)
                    secrets.append(try RecordV2Decoder.openSecret(0..<box.count, of: item.id, in: box, keys: keys))
                }
            }
            return .read(secrets.map { String(decoding: $0, as: UTF8.self) })
        } catch {
            return .refused(error)
        }
    }

    @Test("An old copy and the old password read nothing written after changePassword; after the slot-only change they do",
          arguments: [2, 1])
    func oldCopyAndOldPassword(formatVersion: Int) throws {
        // Control: the slot-only change keeps the master key, and the attack reads the item written after it.
        // This shows the attack below is real, so that its failure after changePassword means something.
        do {
            let directory = TemporaryDirectory()
            let (path, oldCopy, _) = try Self.scenario(directory, formatVersion: formatVersion, change: .keepingKeys)
            #expect(try Keychain.open(at: path, credential: .password("new")).fileFormatVersion == formatVersion)
            let stolen = try Self.stolenMasterKey(oldCopy: oldCopy, formatVersion: formatVersion)
            #expect(try Self.attack(path, masterKey: stolen, formatVersion: formatVersion)
                == .read(["written before the change", Self.distinctive]))
        }
        let directory = TemporaryDirectory()
        let (path, oldCopy, keychain) = try Self.scenario(directory, formatVersion: formatVersion, change: .rotating)
        #expect(keychain.fileFormatVersion == formatVersion)
        let stolen = try Self.stolenMasterKey(oldCopy: oldCopy, formatVersion: formatVersion)
        // The stolen key opens the old copy: the harness holds the key an attacker would.
        try writeFileBytes(oldCopy, to: directory.file("old-copy.kcf"))
        #expect(try Self.attack(directory.file("old-copy.kcf"), masterKey: stolen, formatVersion: formatVersion)
            == .read(["written before the change"]))
        // The new file's header does not verify under it: version 2 says wrongCredentials, version 1 a MAC that
        // does not verify. Nothing is read.
        let attacked = try Self.attack(path, masterKey: stolen, formatVersion: formatVersion)
        if formatVersion == 1 {
            guard case .refused(.corrupted(_, let reason)) = attacked else {
                Issue.record("the old master key read the new version 1 file: \(attacked)")
                return
            }
            #expect(reason == "header MAC does not verify (the header was altered)")
        } else {
            #expect(attacked == .refused(.wrongCredentials))
        }
        #expect(throws: KeychainError.wrongCredentials) { _ = try Keychain.open(at: path, credential: .password("old")) }
        let reopened = try Keychain.open(at: path, credential: .password("new"), options: TestKeychain.versionOneOpenOptions)
        #expect(reopened.fileFormatVersion == formatVersion)
        let secrets = try reopened.search(Query(.genericPassword, limit: .all), returning: [.data]).map { String(decoding: $0.value ?? [], as: UTF8.self) }
        #expect(secrets.sorted() == [Self.distinctive, "written before the change"].sorted())
    }

    @Test("A password change that upgrades a version 1 file rotates too: the old copy's key opens nothing of the version 2 file")
    func upgradingChangeRotates() throws {
        // Control: the slot-only change through the upgrade keeps the master key, which reads the new file.
        do {
            let directory = TemporaryDirectory()
            let (path, oldCopy, keychain) = try Self.scenario(directory, formatVersion: 1, change: .keepingKeys, upgrading: true)
            #expect(keychain.fileFormatVersion == 2)
            let stolen = try Self.stolenMasterKey(oldCopy: oldCopy, formatVersion: 1)
            #expect(try Self.attack(path, masterKey: stolen, formatVersion: 2) == .read(["written before the change", Self.distinctive]))
        }
        let directory = TemporaryDirectory()
        let (path, oldCopy, keychain) = try Self.scenario(directory, formatVersion: 1, change: .rotating, upgrading: true)
        #expect(keychain.fileFormatVersion == 2)
        let stolen = try Self.stolenMasterKey(oldCopy: oldCopy, formatVersion: 1)
        #expect(try Self.attack(path, masterKey: stolen, formatVersion: 2) == .refused(.wrongCredentials))
        #expect(throws: KeychainError.wrongCredentials) { _ = try Keychain.open(at: path, credential: .password("old")) }
        #expect(try Keychain.open(at: path, credential: .password("new")).count == 2)
    }

    @Test("A Keychain opened with the old password before the change fails to read an item added after it: wrongCredentials",
          arguments: [2, 1])
    func otherInstanceIsLockedOut(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let options = TestKeychain.options(formatVersion: formatVersion)
        let keychain = try Keychain.create(at: path, credential: .password("old"), options: options)
        try keychain.add(GenericPassword(service: "svc", account: "before", password: "written before the change"))
        let other = try Keychain.open(at: path, credential: .password("old"), options: TestKeychain.versionOneOpenOptions)
        #expect(try other.search(Query.genericPassword(service: "svc")).count == 1)
        try keychain.changePassword(from: "old", to: "new", iterations: Self.fast)
        try keychain.add(GenericPassword(service: "svc", account: "after", password: Self.distinctive))
        #expect(throws: KeychainError.wrongCredentials) {
            _ = try other.search(Query.genericPassword(service: "svc", account: "after"), returning: [.data])
        }
        #expect(throws: KeychainError.wrongCredentials) {
            _ = try other.search(Query(.genericPassword, limit: .all))
        }
        // The changing instance goes on under the new key.
        #expect(try keychain.search(Query(.genericPassword, limit: .all)).count == 2)
    }

    @Test("With other key slots the rotating change is refused before any key is derived, the file unchanged",
          arguments: [2, 1])
    func refusedWithOtherSlots(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        var options = TestKeychain.options(formatVersion: formatVersion)
        options.additionalCredentials = [.password("second"), .key(SymmetricKey(size: .bits256))]
        let keychain = try Keychain.create(at: path, credential: .password("old"), options: options)
        try keychain.add(GenericPassword(service: "svc", account: "before", password: "written before the change"))
        let before = try fileBytes(path)
        let text = expectInvalidParameter(
            "2 other credentials", "rotateMasterKey(credentials:)", "every credential to keep", "changePasswordKeepingKeys",
            "old copy"
        ) {
            try keychain.changePassword(from: "old", to: "new", iterations: Self.fast)
        }
        #expect(text != nil)
        // Refused first: a wrong old password would be wrongCredentials had the old slots been tried, and a new slot
        // of 19,000,000 PBKDF2 rounds (within the header's total, so only the order refuses it; seconds to derive)
        // would show in the time.
        let started = Date()
        _ = expectInvalidParameter("2 other credentials") {
            try keychain.changePassword(from: "not the password", to: "new", iterations: .insecureForTesting(19_000_000))
        }
        _ = expectInvalidParameter("2 other credentials") {
            try keychain.changeCredential(from: .password("second"), to: .password("new"), keyDerivation: .pbkdf2(.insecureForTesting(19_000_000)))
        }
        #expect(Date().timeIntervalSince(started) < 2, "the refusal derived a key first")
        let unchanged = try fileBytes(path) == before
        #expect(unchanged, "a refused change altered the file")
        // Both ways out work: the slot-only change, and a rotation naming every credential to keep.
        try keychain.changePasswordKeepingKeys(from: "old", to: "new", keyDerivation: .pbkdf2(Self.fast))
        _ = try Keychain.open(at: path, credential: .password("second"), options: TestKeychain.versionOneOpenOptions)
        try keychain.rotateMasterKey(credentials: [.password("newer"), .password("second")], iterations: Self.fast)
        #expect(try keychain.keySlots().count == 2)
    }

    @Test("After its own password change a keychain opens the file again with the new credential: a later upgrade, and another process's rotation that keeps that credential, still work (found by helper-37's review)",
          arguments: [1, 2])
    func keptCredentialFollowsTheChange(formatVersion: Int) throws {
        for change in [Change.rotating, .keepingKeys] {
            let directory = TemporaryDirectory()
            let (path, _, keychain) = try Self.scenario(directory, formatVersion: formatVersion, change: change)
            if formatVersion == 1 {
                // The upgrade finds the slot this keychain opens by the credential it keeps.
                #expect(try keychain.upgradeFormat(), "\(change)")
            }
            let other = try Keychain.open(at: path, credential: .password("new"))
            try other.rotateMasterKey(credentials: [.password("second"), .password("new")], iterations: Self.fast)
            try other.add(GenericPassword(service: "svc", account: "third", password: "by the other process"))
            // The master key this keychain holds no longer opens the file; the new password does.
            try keychain.refresh()
            #expect(keychain.count == 3, "\(change)")
            #expect(try keychain.password(forService: "svc", account: "third") == "by the other process", "\(change)")
        }
    }

    @Test("The iterations overloads and the async twins rotate too")
    func overloadsRotate() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try Keychain.create(at: path, credential: .password("old"), options: TestKeychain.fastOptions)
        func master() -> SymmetricKey { keychain.log.masterKey }
        var last = master()
        var changes: [(String, () async throws -> Void)] = []
        changes.append(("changePassword(iterations:)", { try keychain.changePassword(from: "old", to: "p1", iterations: Self.fast) }))
        changes.append(("changeCredential(iterations:)", {
            try keychain.changeCredential(from: .password("p1"), to: .password("p2"), iterations: Self.fast) }))
        changes.append(("changeCredential(keyDerivation:)", {
            try keychain.changeCredential(from: .password("p2"), to: .password("p3"), keyDerivation: .pbkdf2(Self.fast)) }))
        changes.append(("async changePassword(keyDerivation:)", {
            try await keychain.async.changePassword(from: "p3", to: "p4", keyDerivation: .pbkdf2(Self.fast)) }))
        changes.append(("async changePassword(iterations:)", { try await keychain.async.changePassword(from: "p4", to: "p5", iterations: Self.fast) }))
        changes.append(("async changeCredential(keyDerivation:)", {
            try await keychain.async.changeCredential(from: .password("p5"), to: .password("p6"), keyDerivation: .pbkdf2(Self.fast)) }))
        changes.append(("async changeCredential(iterations:)", {
            try await keychain.async.changeCredential(from: .password("p6"), to: .password("p7"), iterations: Self.fast) }))
        for (name, change) in changes {
            try await change()
            let now = master()
            #expect(now != last, "\(name) kept the master key")
            last = now
        }
        // The keeping-keys twins keep it.
        try await keychain.async.changePasswordKeepingKeys(from: "p7", to: "p8", keyDerivation: .pbkdf2(Self.fast))
        #expect(master() == last, "async changePasswordKeepingKeys changed the master key")
        try await keychain.async.changeCredentialKeepingKeys(from: .password("p8"), to: .password("p9"), keyDerivation: .pbkdf2(Self.fast))
        #expect(master() == last, "async changeCredentialKeepingKeys changed the master key")
        try keychain.changeCredentialKeepingKeys(from: .password("p9"), to: .password("p10"), keyDerivation: .pbkdf2(Self.fast))
        #expect(master() == last, "changeCredentialKeepingKeys changed the master key")
        let opens = { () throws -> Bool in try Keychain.open(at: path, credential: .password("p10")).fileFormatVersion == 2 }
        #expect(try opens())
    }
}
