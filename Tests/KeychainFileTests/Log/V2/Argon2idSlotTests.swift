import Foundation
import Testing
import KeychainCrypto
@testable import KeychainFile

/// Password slots of KDF id 3 (SPEC.md §21.1, §21.2) as the library writes them: what `PasswordKeyDerivation` asks
/// for is in the header's bytes, the slot opens with its password only, rewrites keep it, and a version 1 file
/// refuses it. Argon2id runs at a few KiB here (`.insecureForTesting`), except where the standard itself is checked.
@Suite("Argon2id password slots: written, opened, kept, refused in version 1")
struct Argon2idSlotTests {
    static let cheap = try! PasswordKeyDerivation.insecureForTesting(argon2idMemoryKiB: 64, passes: 2, lanes: 2)
    static let fastPBKDF2 = PasswordKeyDerivation.pbkdf2(.insecureForTesting(1_000))

    /// A committed slot's first 32 bytes in a version 2 header copy A (SPEC.md §20.1, §21.1): type, KDF id, length,
    /// slot id and the 12 parameter bytes.
    static func slotPrefix(_ path: String, slot: Int) throws -> (type: UInt8, kdf: UInt8, length: Int, parameters: [UInt8]) {
        let bytes = try fileBytes(path)
        let start = 112 + 156 * slot
        return (bytes[start], bytes[start + 1], Int(bytes[start + 2]) << 8 | Int(bytes[start + 3]),
                Array(bytes[(start + 20)..<(start + 32)]))
    }

    /// The 12 parameter bytes of KDF id 3: u32 memory KiB ‖ u32 passes ‖ u8 lanes ‖ 0³, big-endian.
    static func argon2Parameters(memoryKiB: UInt32, passes: UInt32, lanes: UInt8) -> [UInt8] {
        [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: memoryKiB >> $0) } + [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: passes >> $0) }
            + [lanes, 0, 0, 0]
    }

    static func pbkdf2Parameters(_ iterations: UInt32) -> [UInt8] {
        [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: iterations >> $0) } + [UInt8](repeating: 0, count: 8)
    }

    func create(_ directory: TemporaryDirectory, _ keyDerivation: PasswordKeyDerivation,
                additional: [Credential] = []) throws -> Keychain {
        try Keychain.create(
            at: directory.file("test.kcf"), credential: TestKeychain.password,
            options: Keychain.CreationOptions(passwordKeyDerivation: keyDerivation, additionalCredentials: additional))
    }

    @Test("A new keychain's password slot is KDF id 3 with the parameters asked for; it opens with its password only")
    func writtenAndOpened() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try create(directory, try .insecureForTesting(argon2idMemoryKiB: 200, passes: 3, lanes: 2))
        try keychain.add(GenericPassword(service: "svc", account: "ann", password: "s3cret"))
        let slot = try Self.slotPrefix(path, slot: 0)
        #expect(slot.type == 1 && slot.kdf == 3 && slot.length == 156)
        #expect(slot.parameters == Self.argon2Parameters(memoryKiB: 200, passes: 3, lanes: 2))
        #expect(try keychain.keySlots().map(\.kind) == [.passwordArgon2id(memoryKiB: 200, passes: 3, lanes: 2)])
        let reopened = try Keychain.open(at: path, credential: TestKeychain.password)
        #expect(try reopened.find(GenericPassword.self, matching: .genericPassword(service: "svc", account: "ann")).first?.password == "s3cret")
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: path, credential: .password("not the password")) }
    }

    @Test("The default options write Argon2id at 64 MiB, 3 passes and 4 lanes into a version 2 file")
    func standardIsArgon2id() throws {
        let directory = TemporaryDirectory()
        _ = try Keychain.create(at: directory.file("test.kcf"), credential: TestKeychain.password)
        let slot = try Self.slotPrefix(directory.file("test.kcf"), slot: 0)
        #expect(slot.kdf == 3)
        #expect(slot.parameters == Self.argon2Parameters(memoryKiB: 65_536, passes: 3, lanes: 4))
    }

    @Test("PBKDF2 chosen, through keyDerivation or the iterations overloads, writes KDF id 1 with its rounds")
    func pbkdf2Chosen() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try create(directory, Self.fastPBKDF2)
        #expect(try Self.slotPrefix(path, slot: 0).parameters == Self.pbkdf2Parameters(1_000))
        #expect(try Self.slotPrefix(path, slot: 0).kdf == 1)
        try keychain.addCredential(.password("second"), iterations: .insecureForTesting(1_500))
        #expect(try Self.slotPrefix(path, slot: 1).kdf == 1)
        #expect(try Self.slotPrefix(path, slot: 1).parameters == Self.pbkdf2Parameters(1_500))
        try keychain.addCredential(.password("third"), keyDerivation: Self.cheap)
        #expect(try Self.slotPrefix(path, slot: 2).kdf == 3)
        #expect(try Self.slotPrefix(path, slot: 2).parameters == Self.argon2Parameters(memoryKiB: 64, passes: 2, lanes: 2))
        for password in ["second", "third"] { _ = try Keychain.open(at: path, credential: .password(password)) }
    }

    @Test("Rewrites keep an Argon2id slot's bytes: compaction, a slot added, another slot's password changed")
    func rewritesKeepTheSlot() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try create(directory, Self.cheap, additional: [.password("other")])
        let slotBytes = { () throws -> [UInt8] in Array(try fileBytes(path)[112..<(112 + 156)]) }
        let before = try slotBytes()
        #expect(before[1] == 3)
        try keychain.add(GenericPassword(service: "svc", account: "ann", password: "s3cret"))
        try keychain.compact()
        #expect(try slotBytes() == before)
        try keychain.addCredential(.password("third"), keyDerivation: Self.fastPBKDF2)
        #expect(try slotBytes() == before)
        try keychain.changePasswordKeepingKeys(from: "other", to: "other, changed", keyDerivation: Self.fastPBKDF2)
        #expect(try slotBytes() == before)
        #expect(try keychain.keySlots().map(\.kind) == [
            .passwordArgon2id(memoryKiB: 64, passes: 2, lanes: 2), .password(iterations: 1_000), .password(iterations: 1_000),
        ])
        _ = try Keychain.open(at: path, credential: TestKeychain.password)
    }

    @Test("changePassword with a chosen KDF writes it: PBKDF2 to Argon2id and back; only the new password opens")
    func changePasswordChoosesTheKDF() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try create(directory, Self.fastPBKDF2)
        try keychain.changePassword(from: "correct horse battery staple", to: "new one",
                                    keyDerivation: try .insecureForTesting(argon2idMemoryKiB: 96, passes: 1, lanes: 3))
        #expect(try Self.slotPrefix(path, slot: 0).kdf == 3)
        #expect(try Self.slotPrefix(path, slot: 0).parameters == Self.argon2Parameters(memoryKiB: 96, passes: 1, lanes: 3))
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: path, credential: TestKeychain.password) }
        _ = try Keychain.open(at: path, credential: .password("new one"))
        try keychain.changePassword(from: "new one", to: "newer", iterations: .insecureForTesting(1_200))
        #expect(try Self.slotPrefix(path, slot: 0).kdf == 1)
        #expect(try Self.slotPrefix(path, slot: 0).parameters == Self.pbkdf2Parameters(1_200))
        _ = try Keychain.open(at: path, credential: .password("newer"))
    }

    @Test("rotateMasterKey gives every password slot the chosen KDF; a raw key's slot stays HKDF")
    func rotation() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try create(directory, Self.fastPBKDF2)
        let key = SymmetricKey(size: .bits256)
        try keychain.rotateMasterKey(credentials: [.password("one"), .key(key), .password("two")], keyDerivation: Self.cheap)
        #expect(try (0..<3).map { try Self.slotPrefix(path, slot: $0).kdf } == [3, 2, 3])
        #expect(try Self.slotPrefix(path, slot: 2).parameters == Self.argon2Parameters(memoryKiB: 64, passes: 2, lanes: 2))
        for credential in [Credential.password("one"), .key(key), .password("two")] { _ = try Keychain.open(at: path, credential: credential) }
    }

    @Test("AsyncKeychain's twins pass the chosen KDF on")
    func asyncTwins() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try await AsyncKeychain.create(
            at: path, credential: TestKeychain.password, options: Keychain.CreationOptions(passwordKeyDerivation: Self.fastPBKDF2))
        let added = try await keychain.addCredential(.password("second"), keyDerivation: Self.cheap)
        #expect(added.kind == .passwordArgon2id(memoryKiB: 64, passes: 2, lanes: 2))
        try await keychain.changePasswordKeepingKeys(from: "second", to: "third", keyDerivation: try .insecureForTesting(argon2idMemoryKiB: 72, passes: 1, lanes: 1))
        #expect(try Self.slotPrefix(path, slot: 1).parameters == Self.argon2Parameters(memoryKiB: 72, passes: 1, lanes: 1))
        try await keychain.rotateMasterKey(credentials: [.password("fourth")], keyDerivation: Self.cheap)
        #expect(try Self.slotPrefix(path, slot: 0).kdf == 3)
    }

    /// Whether `work` throws `invalidParameter` whose reason says format version 1 cannot hold Argon2id.
    static func refusedAsVersionOne(_ work: () throws -> Void) -> Bool {
        do {
            try work()
            return false
        } catch let error as KeychainError {
            guard case .invalidParameter(let reason) = error else { return false }
            return reason.contains("Argon2id password slots need format version 2") && reason.contains("version 1")
        } catch {
            return false
        }
    }

    @Test("A file kept at version 1 refuses Argon2id for a new password slot and is left as it was; PBKDF2 goes on")
    func keptVersionOneRefuses() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try keychain.add(GenericPassword(service: "svc", account: "ann", password: "s3cret"))
        let before = try fileBytes(path)
        #expect(Self.refusedAsVersionOne { try keychain.addCredential(.password("second"), keyDerivation: Self.cheap) })
        #expect(Self.refusedAsVersionOne { try keychain.changePassword(from: "correct horse battery staple", to: "x", keyDerivation: Self.cheap) })
        #expect(Self.refusedAsVersionOne { try keychain.rotateMasterKey(credentials: [.password("y")], keyDerivation: .recommendedArgon2id) })
        #expect(try fileBytes(path) == before)
        #expect(keychain.fileFormatVersion == 1)
        try keychain.addCredential(.password("second"), keyDerivation: Self.fastPBKDF2)
        #expect(keychain.fileFormatVersion == 1)
        #expect(try keychain.keySlots().map(\.kind) == [.password(iterations: 1_000), .password(iterations: 1_000)])
    }

    @Test("Creating a version 1 file with Argon2id is refused before anything is made; its default there is PBKDF2 600,000")
    func createdVersionOne() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        #expect(Self.refusedAsVersionOne {
            _ = try Keychain.create(at: path, credential: TestKeychain.password,
                                    options: Keychain.CreationOptions(passwordKeyDerivation: Self.cheap, formatVersion: 1))
        })
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: path + ".lock"))
        let keychain = try Keychain.create(at: path, credential: TestKeychain.password, options: Keychain.CreationOptions(formatVersion: 1))
        #expect(keychain.fileFormatVersion == 1)
        #expect(try keychain.keySlots().map(\.kind) == [.password(iterations: 600_000)])
    }

    @Test("A version 1 file not kept at version 1 takes Argon2id: the change upgrades it to version 2")
    func upgradingVersionOneTakesArgon2id() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try Keychain.create(
            at: path, credential: TestKeychain.password,
            options: Keychain.CreationOptions(passwordKeyDerivation: Self.fastPBKDF2, formatVersion: 1))
        try keychain.addCredential(.password("second"), keyDerivation: Self.cheap)
        #expect(keychain.fileFormatVersion == 2)
        #expect(try keychain.keySlots().map(\.kind) == [.password(iterations: 1_000), .passwordArgon2id(memoryKiB: 64, passes: 2, lanes: 2)])
        _ = try Keychain.open(at: path, credential: .password("second"))
    }

    @Test("A writer refuses slots whose Argon2id memory × passes add up to more than 2²⁶ KiB (SPEC.md §20.1)")
    func headerArgon2Total() throws {
        func slot(_ kdf: SlotKDF, _ id: UInt8) -> HeaderKeySlot {
            .committed(CommittedKeySlot(
                type: .password, kdf: kdf, slotID: [UInt8](repeating: id, count: 16), salt: [UInt8](repeating: 0, count: 32),
                commitment: [UInt8](repeating: 0, count: 32), nonce: [UInt8](repeating: 0, count: 12),
                wrappedKey: [UInt8](repeating: 0, count: 32), tag: [UInt8](repeating: 0, count: 16)))
        }
        let half = SlotKDF.argon2id(memoryKiB: 1 << 19, passes: 64, lanes: 1)  // 2²⁵ KiB of work
        try RecordLogV2.checkSlotLimits([slot(half, 1), slot(half, 2)])
        #expect(throws: KeychainError.limitReached(
            "the Argon2id password slots would need 67108928 KiB of memory × passes together; the limit is 67108864 KiB")) {
            try RecordLogV2.checkSlotLimits([slot(half, 1), slot(half, 2), slot(.argon2id(memoryKiB: 64, passes: 1, lanes: 1), 3)])
        }
        try RecordLogV2.checkSlotLimits([slot(half, 1), slot(half, 2), slot(.pbkdf2(iterations: 1_000), 3)])
    }

    @Test("Creating with slots over a header total is refused before any key is derived or the lock file is made")
    func createOverTotalRefusedFirst() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        // 9 Argon2id slots of 2²³ KiB × passes each, 9 PBKDF2 slots of 2,500,000 rounds: each over its total (2²⁶
        // KiB, 20,000,000 rounds); derived before the check, the keys would take seconds to minutes.
        let others: [Credential] = (1...8).map { .password("other \($0)") }
        let started = Date()
        #expect(throws: KeychainError.limitReached("the password slots would need 22500000 PBKDF2 iterations together; the limit is 20,000,000")) {
            try Keychain.create(at: path, credential: TestKeychain.password, options: Keychain.CreationOptions(
                passwordKeyDerivation: .pbkdf2(try .custom(2_500_000)), additionalCredentials: others))
        }
        #expect(!FileManager.default.fileExists(atPath: path + ".lock"), "create made the lock file before refusing")
        #expect(Date().timeIntervalSince(started) < 2, "create derived keys before refusing")
        #expect(throws: KeychainError.limitReached(
            "the Argon2id password slots would need 75497472 KiB of memory × passes together; the limit is 67108864 KiB")) {
            try Keychain.create(at: path, credential: TestKeychain.password, options: Keychain.CreationOptions(
                passwordKeyDerivation: try .insecureForTesting(argon2idMemoryKiB: 8, passes: 1 << 20, lanes: 1),
                additionalCredentials: others))
        }
        #expect(!FileManager.default.fileExists(atPath: path + ".lock"))
    }

    @Test("Adding or changing to an Argon2id slot over the header's total is refused before its key is derived")
    func changeOverTotalRefusedFirst() throws {
        let directory = TemporaryDirectory()
        let keychain = try create(directory, Self.cheap, additional: [.password("second")])
        let before = try fileBytes(directory.file("test.kcf"))
        // 2²⁶ KiB × passes: alone at the total, over it beside the cheap slot; deriving it would take about a minute.
        let atTotal = try PasswordKeyDerivation.insecureForTesting(argon2idMemoryKiB: 64, passes: 1 << 20, lanes: 1)
        let started = Date()
        #expect(throws: KeychainError.limitReached(
            "the Argon2id password slots would need 67109120 KiB of memory × passes together; the limit is 67108864 KiB")) {
            try keychain.addCredential(.password("third"), keyDerivation: atTotal)
        }
        #expect(throws: KeychainError.limitReached(
            "the Argon2id password slots would need 67108992 KiB of memory × passes together; the limit is 67108864 KiB")) {
            try keychain.changeCredentialKeepingKeys(from: .password("second"), to: .password("third"), keyDerivation: atTotal)
        }
        #expect(Date().timeIntervalSince(started) < 2, "a refused change derived its key first")
        #expect(try fileBytes(directory.file("test.kcf")) == before)
    }
}
