import Foundation
import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// What damage to a version 2 header does: each page repairs itself from scattered damage and bursts; a lost
/// page is served by the other; a tampered slot or header is `corrupted`, a wrong password `wrongCredentials`.
@Suite("Format v2: header damage, repair and tampering")
struct HeaderV2DamageTests {
    static let password = Credential.password("correct horse battery staple")

    /// A header with a password slot (PBKDF2, one iteration: not a KDF test) and a raw-key slot.
    static func make(masterKey: SymmetricKey = SymmetricKey(data: [UInt8](repeating: 7, count: 32))) throws -> (bytes: [UInt8], header: FileHeaderV2, key: SymmetricKey) {
        var random = SplitMix64(seed: 30)
        let fileID = randomBytes(16, using: &random)
        let slots: [HeaderKeySlot] = [
            .committed(try CommittedKeySlot.make(for: password, kdf: .pbkdf2(iterations: 1), masterKey: masterKey, fileID: fileID, using: &random)),
            .committed(try CommittedKeySlot.make(for: .key(SymmetricKey(data: [UInt8](repeating: 9, count: 32))), kdf: .hkdf, masterKey: masterKey, fileID: fileID, using: &random)),
        ]
        let draft = FileHeaderV2(
            fileID: fileID, epoch: 1, epochSalt: randomBytes(32, using: &random), rewriteEnd: 0, rewriteHeadSequence: 0,
            rewriteHeadChain: [UInt8](repeating: 0, count: 16), tombstoneHorizonDays: 90, slots: slots)
        let keys = try draft.epochKeys(masterKey: masterKey)
        // No records written: the rewrite head is (0, C0).
        let header = FileHeaderV2(
            fileID: fileID, epoch: 1, epochSalt: draft.epochSalt, rewriteEnd: 0, rewriteHeadSequence: 0,
            rewriteHeadChain: draft.initialChainValue(headerKey: keys.header), tombstoneHorizonDays: 90, slots: slots)
        return (header.encode(headerKey: keys.header), header, masterKey)
    }

    @Test("Every burst of 256 bytes anywhere in a page is repaired, and the copy reports it")
    func burstsRepaired() throws {
        let (bytes, _, _) = try Self.make()
        let page = HeaderPage.encode(bytes)
        for start in stride(from: 0, to: HeaderPage.length - 256, by: 61) {
            var damaged = page
            for offset in start..<(start + 256) { damaged[offset] ^= UInt8(truncatingIfNeeded: offset | 1) }
            let copy = HeaderPage.decode(damaged)
            #expect(copy.header == bytes, "burst at \(start)")
            if case .intact = copy { Issue.record("burst at \(start) reported as intact") }
        }
    }

    @Test("Sixteen flipped bytes in each of the sixteen codewords are repaired; seventeen in one are not proposed")
    func scatteredFlips() throws {
        let (bytes, _, _) = try Self.make()
        let page = HeaderPage.encode(bytes)
        var random = SplitMix64(seed: 5)
        var damaged = page
        for codeword in 0..<16 {
            var symbols = Array(0..<255).shuffled(using: &random).prefix(16)
            symbols.sort()
            for symbol in symbols {
                let offset = symbol < 223 ? symbol * 16 + codeword : HeaderPage.blockLength + (symbol - 223) * 16 + codeword
                damaged[offset] ^= 0x5A
            }
        }
        #expect(HeaderPage.decode(damaged).header == bytes)
        // Seventeen symbols of codeword 0 inside the header: beyond the code; the checksum refuses what it proposes.
        var beyond = page
        for symbol in 0..<17 { beyond[symbol * 16] ^= 0xA5 }
        guard case .unusable = HeaderPage.decode(beyond) else {
            Issue.record("a page beyond repair was accepted")
            return
        }
    }

    @Test("A lost page A, or a lost page B, opens from the other copy and names the lost one")
    func lostPageServedByTheOther() throws {
        let (bytes, _, _) = try Self.make()
        let page = HeaderPage.encode(bytes)
        let zeros = [UInt8](repeating: 0, count: HeaderPage.length)
        let fromB = try OpenedHeaderV2(pageA: zeros, pageB: page, credential: Self.password)
        #expect(fromB.headerBytes == bytes)
        if case .unusable = fromB.pages[0] {} else { Issue.record("page A not reported: \(fromB.pages[0])") }
        let fromA = try OpenedHeaderV2(pageA: page, pageB: [], credential: Self.password)
        #expect(fromA.headerBytes == bytes)
        if case .unusable = fromA.pages[1] {} else { Issue.record("page B not reported") }
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try OpenedHeaderV2(pageA: zeros, pageB: zeros, credential: Self.password) }
    }

    @Test("One flipped bit anywhere in both copies of the header (the same bit) is repaired, never a wrong answer")
    func everyBitOfBothCopies() throws {
        let (bytes, _, _) = try Self.make()
        let page = HeaderPage.encode(bytes)
        for offset in 0..<HeaderPage.length {
            var damaged = page
            damaged[offset] ^= UInt8(1 << (offset % 8))
            let opened = try OpenedHeaderV2(pageA: damaged, pageB: damaged, credential: Self.password)
            #expect(opened.headerBytes == bytes, "bit at byte \(offset)")
            if case .intact = opened.pages[0] { Issue.record("damage at \(offset) not reported") }
        }
    }

    @Test("A wrong password is wrongCredentials; a slot altered after it was made for this password is corrupted")
    func tamperedSlotIsCorrupted() throws {
        let (bytes, header, key) = try Self.make()
        let page = HeaderPage.encode(bytes)
        #expect(throws: KeychainError.wrongCredentials) { try OpenedHeaderV2(pageA: page, pageB: page, credential: .password("wrong")) }
        // Alter the wrapped key of slot 0 and re-seal the header's checksum and MAC as an attacker with the
        // master key cannot... but without it: the checksum is recomputed, the MAC is not.
        guard case .committed(let slot) = header.slots[0] else { throw KeychainError.notAKeychain }
        var wrapped = slot.wrappedKey
        wrapped[0] ^= 1
        let altered = CommittedKeySlot(
            type: slot.type, kdf: slot.kdf, slotID: slot.slotID, salt: slot.salt, commitment: slot.commitment,
            nonce: slot.nonce, wrappedKey: wrapped, tag: slot.tag)
        let tampered = FileHeaderV2(
            fileID: header.fileID, epoch: header.epoch, epochSalt: header.epochSalt, rewriteEnd: header.rewriteEnd,
            rewriteHeadSequence: header.rewriteHeadSequence, rewriteHeadChain: header.rewriteHeadChain,
            tombstoneHorizonDays: header.tombstoneHorizonDays, slots: [.committed(altered), header.slots[1]])
        let tamperedPage = HeaderPage.encode(tampered.encode(headerKey: SymmetricKey(data: [UInt8](repeating: 1, count: 32))))
        let slotReason = Self.corruptedReason { () throws(KeychainError) in _ = try OpenedHeaderV2(pageA: tamperedPage, pageB: tamperedPage, credential: Self.password) }
        #expect(slotReason?.contains("commitment") == true, "\(slotReason ?? "opened")")
        // The raw-key slot still opens the master key, and then the MAC (made under another key) fails.
        let raw = Credential.key(SymmetricKey(data: [UInt8](repeating: 9, count: 32)))
        let macReason = Self.corruptedReason { () throws(KeychainError) in _ = try OpenedHeaderV2(pageA: tamperedPage, pageB: tamperedPage, credential: raw) }
        #expect(macReason?.contains("MAC") == true, "\(macReason ?? "opened")")
        #expect(try OpenedHeaderV2(pageA: page, pageB: page, credential: raw).masterKey == key)
    }

    /// The reason of the `.corrupted` error `body` throws; nil if it throws nothing or something else.
    static func corruptedReason(_ body: () throws(KeychainError) -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            if case .corrupted(_, let reason) = error { return reason }
            return nil
        }
    }

    @Test("A tampered or forged copy A does not stop an intact copy B: the header, key and slot index all come from B")
    func tamperedCopyDoesNotBlockTheOther() throws {
        let (bytes, header, key) = try Self.make()
        let intact = HeaderPage.encode(bytes)
        guard case .committed(let slot) = header.slots[0] else { throw KeychainError.notAKeychain }
        var wrapped = slot.wrappedKey
        wrapped[3] ^= 0x10
        let damagedSlot = CommittedKeySlot(
            type: slot.type, kdf: slot.kdf, slotID: slot.slotID, salt: slot.salt, commitment: slot.commitment,
            nonce: slot.nonce, wrappedKey: wrapped, tag: slot.tag)
        // Copy A: slot 0's wrap altered (its commitment still matches the password), the other slots in another
        // order, under a MAC nobody can verify.
        let altered = FileHeaderV2(
            fileID: header.fileID, epoch: header.epoch, epochSalt: header.epochSalt, rewriteEnd: header.rewriteEnd,
            rewriteHeadSequence: header.rewriteHeadSequence, rewriteHeadChain: header.rewriteHeadChain,
            tombstoneHorizonDays: header.tombstoneHorizonDays, slots: [header.slots[1], .committed(damagedSlot)])
        let forgedA = HeaderPage.encode(altered.encode(headerKey: SymmetricKey(data: [UInt8](repeating: 3, count: 32))))
        for credential in [Self.password, Credential.key(SymmetricKey(data: [UInt8](repeating: 9, count: 32)))] {
            let opened = try OpenedHeaderV2(pageA: forgedA, pageB: intact, credential: credential)
            #expect(opened.headerBytes == bytes)
            #expect(opened.masterKey == key)
            #expect(opened.header.slots[opened.slotIndex].slotID == (credential.slotType == .password ? header.slots[0].slotID : header.slots[1].slotID))
            if case .unusable = opened.pages[0] {} else { Issue.record("copy A not marked for rewriting: \(opened.pages[0])") }
            #expect(opened.pages[1] == .intact(bytes))
        }
        // Copy A alone: the damaged slot is corrupted; the raw key opens its slot and meets the forged MAC.
        #expect(throws: KeychainError.self) { try OpenedHeaderV2(pageA: forgedA, pageB: forgedA, credential: Self.password) }
    }

    /// `header` with another epoch, rewrite end or slot list, sealed under `masterKey`: a copy that verifies.
    static func variant(
        of header: FileHeaderV2, epoch: UInt64? = nil, rewriteEnd: UInt64? = nil, slots: [HeaderKeySlot]? = nil,
        masterKey: SymmetricKey
    ) throws -> (bytes: [UInt8], header: FileHeaderV2) {
        // A head as a writer leaves it: (0, C0) without records, some sequence and chain value after them.
        func with(_ chain: [UInt8], sequence: UInt64) -> FileHeaderV2 {
            FileHeaderV2(
                fileID: header.fileID, epoch: epoch ?? header.epoch, epochSalt: header.epochSalt,
                rewriteEnd: rewriteEnd ?? header.rewriteEnd, rewriteHeadSequence: sequence, rewriteHeadChain: chain,
                tombstoneHorizonDays: header.tombstoneHorizonDays, slots: slots ?? header.slots)
        }
        var changed = with([UInt8](repeating: 0x5C, count: 16), sequence: 3)
        let headerKey = try changed.epochKeys(masterKey: masterKey).header
        if changed.rewriteEnd == 0 { changed = with(changed.initialChainValue(headerKey: headerKey), sequence: 0) }
        return (changed.encode(headerKey: headerKey), changed)
    }

    static let rawKey = Credential.key(SymmetricKey(data: [UInt8](repeating: 9, count: 32)))

    @Test("Two copies that both verify but differ: the higher epoch is used, whichever page holds it, and the other page is reported")
    func differingCopiesHigherEpochWins() throws {
        let (bytes, header, key) = try Self.make()
        // A newer copy, epoch 2, with its slots in the other order.
        let newer = try Self.variant(of: header, epoch: 2, slots: [header.slots[1], header.slots[0]], masterKey: key)
        for (a, b, newerPage) in [(bytes, newer.bytes, 1), (newer.bytes, bytes, 0)] {
            for credential in [Self.password, Self.rawKey] {
                let opened = try OpenedHeaderV2(pageA: HeaderPage.encode(a), pageB: HeaderPage.encode(b), credential: credential)
                #expect(opened.headerBytes == newer.bytes && opened.header.epoch == 2)
                #expect(opened.copiesDisagree)
                #expect(opened.pages[newerPage] == .intact(newer.bytes))
                guard case .unusable(let reason) = opened.pages[1 - newerPage] else {
                    Issue.record("the older copy reported as \(opened.pages[1 - newerPage])")
                    continue
                }
                #expect(reason.contains("also verifies"), "\(reason)")
                // The slot index is the newer copy's own: slot ids were swapped there.
                #expect(opened.slotIndex == (credential.slotType == .password ? 1 : 0))
                #expect(opened.header.slots[opened.slotIndex].slotID == header.slots[credential.slotType == .password ? 0 : 1].slotID)
            }
        }
    }

    @Test("Two copies of one epoch that both verify but differ: page A's is used, and page B is reported")
    func differingCopiesOfOneEpochPageAWins() throws {
        let (bytes, header, key) = try Self.make()
        let other = try Self.variant(of: header, rewriteEnd: 4_096, masterKey: key)
        for (a, b) in [(bytes, other.bytes), (other.bytes, bytes)] {
            let opened = try OpenedHeaderV2(pageA: HeaderPage.encode(a), pageB: HeaderPage.encode(b), credential: Self.password)
            #expect(opened.headerBytes == a)
            #expect(opened.copiesDisagree)
            #expect(opened.pages[0] == .intact(a))
            if case .unusable = opened.pages[1] {} else { Issue.record("page B reported as \(opened.pages[1])") }
        }
        // Identical copies agree.
        let same = try OpenedHeaderV2(pageA: HeaderPage.encode(bytes), pageB: HeaderPage.encode(bytes), credential: Self.password)
        #expect(!same.copiesDisagree && same.pages == [.intact(bytes), .intact(bytes)])
    }

    @Test("The chosen copy has no slot for the credential that opened the other: corrupted, never the other copy's slot index")
    func chosenCopyWithoutTheSlot() throws {
        let (bytes, header, key) = try Self.make()
        // Page A: the same epoch and master key, only the raw-key slot (a stale or altered copy that verifies).
        let rawOnly = try Self.variant(of: header, slots: [header.slots[1]], masterKey: key)
        let pageA = HeaderPage.encode(rawOnly.bytes), pageB = HeaderPage.encode(bytes)
        let reason = Self.corruptedReason { () throws(KeychainError) in _ = try OpenedHeaderV2(pageA: pageA, pageB: pageB, credential: Self.password) }
        #expect(reason?.contains("disagree") == true, "\(reason ?? "opened, or another error")")
        // The raw key opens both; page A's is used, with page A's own slot index.
        let opened = try OpenedHeaderV2(pageA: pageA, pageB: pageB, credential: Self.rawKey)
        #expect(opened.headerBytes == rawOnly.bytes && opened.slotIndex == 0 && opened.copiesDisagree)
        // With page B in a later epoch, the password opens page B.
        let later = try Self.variant(of: header, epoch: 5, masterKey: key)
        let fromB = try OpenedHeaderV2(pageA: pageA, pageB: HeaderPage.encode(later.bytes), credential: Self.password)
        #expect(fromB.headerBytes == later.bytes && fromB.slotIndex == 0)
    }

    @Test("A slot opens under one key-encryption key only: the commitment refuses a key that GCM alone might accept")
    func commitmentBindsTheKey() throws {
        var random = SplitMix64(seed: 8)
        let fileID = randomBytes(16, using: &random)
        let master = SymmetricKey(data: randomBytes(32, using: &random))
        let slot = try CommittedKeySlot.make(for: Self.password, kdf: .pbkdf2(iterations: 1), masterKey: master, fileID: fileID, using: &random)
        #expect(try slot.open(with: Self.password, fileID: fileID, slotOffset: 0) != nil)
        #expect(try slot.open(with: .password("other"), fileID: fileID, slotOffset: 0) == nil)
        // A commitment replaced by one made for another password: that password passes the commitment, but the
        // wrap (made under the first password's KEK) fails: corrupted, never a key.
        guard let otherKEK = try slot.keyEncryptionKey(for: .password("other"), fileID: fileID) else { throw KeychainError.notAKeychain }
        let forged = CommittedKeySlot(
            type: slot.type, kdf: slot.kdf, slotID: slot.slotID, salt: slot.salt,
            commitment: try CommittedKeySlot.commitment(kek: otherKEK, fileID: fileID, slotID: slot.slotID),
            nonce: slot.nonce, wrappedKey: slot.wrappedKey, tag: slot.tag)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try forged.open(with: .password("other"), fileID: fileID, slotOffset: 0) }
        #expect(try forged.open(with: Self.password, fileID: fileID, slotOffset: 0) == nil)
    }

    @Test("A wrap that AES-GCM opens under two passwords' wrap keys opens the slot only for the password committed to")
    func commitmentRefusesAGCMKeyCollision() throws {
        var random = SplitMix64(seed: 9)
        let fileID = randomBytes(16, using: &random)
        let master = SymmetricKey(data: randomBytes(32, using: &random))
        let slot = try CommittedKeySlot.make(for: Self.password, kdf: .pbkdf2(iterations: 1), masterKey: master, fileID: fileID, using: &random)
        guard let otherKEK = try slot.keyEncryptionKey(for: .password("other"), fileID: fileID) else { throw KeychainError.notAKeychain }
        // A wrap that AES-GCM opens under both passwords' wrap keys (one free ciphertext block is enough when the
        // keys are known), under the first password's commitment: the second password gets nil, never a key.
        guard let kek = try slot.keyEncryptionKey(for: Self.password, fileID: fileID) else { throw KeychainError.notAKeychain }
        let wrap1 = try CommittedKeySlot.wrapKey(kek: kek, fileID: fileID, slotID: slot.slotID)
        let wrap2 = try CommittedKeySlot.wrapKey(kek: otherKEK, fileID: fileID, slotID: slot.slotID)
        let aad = CommittedKeySlot.aadPrefix + fileID + slot.parameterBytes
        let both = try GCMForgery.openingUnderBoth(wrap1, wrap2, nonce: slot.nonce, aad: aad, first: [UInt8](repeating: 0xAB, count: 16))
        for key in [wrap1, wrap2] {
            let sealed = try AES.GCM.SealedBox(combined: both)
            #expect(try AES.GCM.open(sealed, using: key, authenticating: aad).count == 32)
        }
        let colliding = CommittedKeySlot(
            type: slot.type, kdf: slot.kdf, slotID: slot.slotID, salt: slot.salt, commitment: slot.commitment,
            nonce: slot.nonce, wrappedKey: Array(both[12..<44]), tag: Array(both[44..<60]))
        #expect(try colliding.open(with: Self.password, fileID: fileID, slotOffset: 0) != nil)
        #expect(try colliding.open(with: .password("other"), fileID: fileID, slotOffset: 0) == nil)
    }

    @Test("Hostile KDF parameters are refused before any derivation")
    func hostileParameters() throws {
        func refused(_ id: UInt8, _ bytes: [UInt8]) -> Bool {
            (try? SlotKDF.parse(id: id, parameters: bytes[...])) == nil
        }
        #expect(refused(1, [0, 0, 0, 0] + [UInt8](repeating: 0, count: 8)))                     // 0 iterations
        #expect(refused(1, [0x00, 0x98, 0x96, 0x81] + [UInt8](repeating: 0, count: 8)))         // 10,000,001
        #expect(refused(3, [0x00, 0x40, 0x00, 0x01, 0, 0, 0, 1, 1, 0, 0, 0]))                  // 4 GiB + 1 KiB
        #expect(refused(3, [0x00, 0x40, 0x00, 0x00, 0, 0, 0, 17, 1, 0, 0, 0]))                 // 4 GiB × 17 passes
        #expect(refused(3, [0, 0, 0, 64, 0, 0, 0, 1, 17, 0, 0, 0]))                             // 17 lanes
        #expect(refused(3, [0, 0, 0, 15, 0, 0, 0, 1, 2, 0, 0, 0]))                              // < 8 KiB per lane
        #expect(refused(2, [1] + [UInt8](repeating: 0, count: 11)))                             // HKDF with parameters
        #expect(refused(9, [UInt8](repeating: 0, count: 12)))                                   // unknown id
        #expect(try SlotKDF.parse(id: 3, parameters: [0, 1, 0, 0, 0, 0, 0, 3, 4, 0, 0, 0][...]) == .argon2id(memoryKiB: 65_536, passes: 3, lanes: 4))
    }

    @Test("A password with a code point Unicode 15.0 leaves unassigned is refused for a new slot; noncharacters and private use are not")
    func unassignedPasswordsRefused() throws {
        var random = SplitMix64(seed: 2)
        let master = SymmetricKey(data: randomBytes(32, using: &random))
        let fileID = randomBytes(16, using: &random)
        for password in ["abc\u{378}", "shaking \u{1FAE9}"] {
            #expect(throws: KeychainError.self, "\(password.unicodeScalars.map { String($0.value, radix: 16) })") {
                try CommittedKeySlot.make(for: .password(password), kdf: .pbkdf2(iterations: 1), masterKey: master, fileID: fileID, using: &random)
            }
        }
        for password in ["shaking \u{1FAE8}", "private \u{E000}", "nonchar " + String(String.UnicodeScalarView([Unicode.Scalar(0xFDD0)!, Unicode.Scalar(0x10FFFF)!])), "\u{0F40}\u{0F80}\u{0F73}"] {
            _ = try CommittedKeySlot.make(for: .password(password), kdf: .pbkdf2(iterations: 1), masterKey: master, fileID: fileID, using: &random)
        }
        #expect(UnicodeAssignedScalars.contains(0x10FFFD))   // plane 16 private use
        #expect(!UnicodeAssignedScalars.contains(0xE0080))   // unassigned in plane 14
        #expect(UnicodeAssignedScalars.contains(0x31350))     // CJK Extension H, new in 15.0
        #expect(!UnicodeAssignedScalars.contains(0x2EBF0))    // CJK Extension I, new in 15.1
    }
}
