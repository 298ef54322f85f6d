import Foundation
import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// What one open may spend on key derivation (SPEC §13, review L4): a reader's cap on Argon2id's memory below
/// the format's 4 GiB, and the per-header work limits spent once across both header copies.
@Suite("Format v2: the key-derivation budget of an open")
struct KeyDerivationBudgetTests {
    static let newPassword = Credential.password("the new password")
    static let oldPassword = Credential.password("the old password")

    /// A header of `epoch` with one password slot of `kdf` for `credential`, sealed under `masterKey`, with no
    /// records: what a writer leaves.
    static func header(
        epoch: UInt64, credential: Credential, kdf: SlotKDF, masterKey: SymmetricKey, fileID: [UInt8], seed: UInt64
    ) throws -> [UInt8] {
        var random = SplitMix64(seed: seed)
        let slot = HeaderKeySlot.committed(try CommittedKeySlot.make(for: credential, kdf: kdf, masterKey: masterKey, fileID: fileID, using: &random))
        let draft = FileHeaderV2(
            fileID: fileID, epoch: epoch, epochSalt: randomBytes(32, using: &random), rewriteEnd: 0, rewriteHeadSequence: 0,
            rewriteHeadChain: [UInt8](repeating: 0, count: 16), tombstoneHorizonDays: 90, slots: [slot])
        let keys = try draft.epochKeys(masterKey: masterKey)
        let header = FileHeaderV2(
            fileID: fileID, epoch: epoch, epochSalt: draft.epochSalt, rewriteEnd: 0, rewriteHeadSequence: 0,
            rewriteHeadChain: draft.initialChainValue(headerKey: keys.header), tombstoneHorizonDays: 90, slots: [slot])
        return HeaderPage.encode(header.encode(headerKey: keys.header))
    }

    static let masterKey = SymmetricKey(data: [UInt8](repeating: 0x42, count: 32))
    static let fileID = [UInt8](repeating: 0x17, count: 16)

    @Test("The standard budget is the format's per-header totals and a 1 GiB cap on Argon2id's memory")
    func standardBudget() {
        let budget = KeyDerivationBudget(memoryLimitKiB: KeyDerivationBudget.standardMemoryLimitKiB)
        #expect(budget.iterationsLeft == 20_000_000)
        #expect(budget.argon2KiBLeft == 67_108_864)
        #expect(budget.memoryLimitKiB == 1_048_576)
        #expect(Keychain.OpenOptions().keyDerivationMemoryLimit == 1_073_741_824)
        // A cap above the format's 4 GiB is the format's.
        #expect(KeyDerivationBudget(memoryLimitKiB: Int.max).memoryLimitKiB == 4_194_304)
    }

    @Test("An Argon2id slot asking for more memory than the reader allows is refused before any allocation: limitReached")
    func argon2MemoryAboveTheCap() throws {
        let kdf = SlotKDF.argon2id(memoryKiB: 2_048, passes: 1, lanes: 1)
        let page = try Self.header(epoch: 1, credential: Self.newPassword, kdf: kdf, masterKey: Self.masterKey, fileID: Self.fileID, seed: 1)
        #expect(throws: KeychainError.limitReached("")) {
            _ = try OpenedHeaderV2(pageA: page, pageB: page, credential: Self.newPassword, budget: KeyDerivationBudget(memoryLimitKiB: 2_047))
        }
        let opened = try OpenedHeaderV2(pageA: page, pageB: page, credential: Self.newPassword, budget: KeyDerivationBudget(memoryLimitKiB: 2_048))
        #expect(opened.masterKey == Self.masterKey)
        // A raw key derives nothing from a password slot, whatever it would ask: wrong credentials, not a limit.
        #expect(throws: KeychainError.wrongCredentials) {
            _ = try OpenedHeaderV2(
                pageA: page, pageB: page, credential: .key(SymmetricKey(data: [UInt8](repeating: 1, count: 32))),
                budget: KeyDerivationBudget(memoryLimitKiB: 8))
        }
    }

    @Test("Two copies with different slots share one budget, and the copy the rule prefers is derived first")
    func workCountedAcrossBothCopies() throws {
        let kdf = SlotKDF.pbkdf2(iterations: 1_000)
        // A password change that crashed between the pages: the newer copy has the new password's slot.
        let newer = try Self.header(epoch: 2, credential: Self.newPassword, kdf: kdf, masterKey: Self.masterKey, fileID: Self.fileID, seed: 2)
        let older = try Self.header(epoch: 1, credential: Self.oldPassword, kdf: kdf, masterKey: Self.masterKey, fileID: Self.fileID, seed: 3)
        let oneCopy = KeyDerivationBudget(memoryLimitKiB: 8, iterations: 1_500)
        for (pageA, pageB) in [(newer, older), (older, newer)] {
            // The newer copy is preferred wherever it is; its slot fits, the older copy's is not derived.
            let opened = try OpenedHeaderV2(pageA: pageA, pageB: pageB, credential: Self.newPassword, budget: oneCopy)
            #expect(opened.header.epoch == 2)
            // The old password fails on the newer copy's slot; the older copy's would take the open past the budget.
            #expect(throws: KeychainError.limitReached("")) {
                _ = try OpenedHeaderV2(pageA: pageA, pageB: pageB, credential: Self.oldPassword, budget: oneCopy)
            }
            // With room for both, the old password gets past the budget (and to the copies' disagreement).
            #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) {
                _ = try OpenedHeaderV2(pageA: pageA, pageB: pageB, credential: Self.oldPassword, budget: KeyDerivationBudget(memoryLimitKiB: 8, iterations: 2_000))
            }
        }
    }

    @Test("Keychain.open honours OpenOptions.keyDerivationMemoryLimit for a file whose slot is Argon2id")
    func openOptionReachesTheHeader() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("argon2.kcf")
        let keychain = try V2Keychain.create(in: directory, name: "argon2.kcf")
        try keychain.add(GenericPassword(service: "svc", account: "a", password: "kept"))
        let log = try V2Keychain.log(keychain)
        let header = log.state.header, master = log.masterKey
        // The same header with its password slot replaced by an Argon2id one (4 MiB) for the same master key.
        var random = SplitMix64(seed: 4)
        let slot = HeaderKeySlot.committed(try CommittedKeySlot.make(
            for: TestKeychain.password, kdf: .argon2id(memoryKiB: 4_096, passes: 1, lanes: 2), masterKey: master,
            fileID: header.fileID, using: &random))
        let replaced = header.replacingSlots([slot])
        let page = HeaderPage.encode(replaced.encode(headerKey: try replaced.epochKeys(masterKey: master).header))
        var bytes = try fileBytes(path)
        bytes.replaceSubrange(0..<page.count, with: page)
        bytes.replaceSubrange(HealingLayout.headerBOffset..<(HealingLayout.headerBOffset + page.count), with: page)
        try writeFileBytes(bytes, to: path)

        #expect(throws: KeychainError.limitReached("")) {
            _ = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(keyDerivationMemoryLimit: 2 << 20))
        }
        #expect(throws: KeychainError.limitReached("")) {
            _ = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true, keyDerivationMemoryLimit: 2 << 20))
        }
        let reopened = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(keyDerivationMemoryLimit: 4 << 20))
        #expect(try reopened.find(GenericPassword.self, matching: .genericPassword(service: "svc", account: "a")).first?.passwordString == "kept")
        // The default, 1 GiB, opens it too.
        _ = try Keychain.open(at: path, credential: TestKeychain.password)
    }
}
