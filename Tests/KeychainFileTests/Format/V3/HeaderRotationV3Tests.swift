import Testing
@testable import KeychainFile
@_spi(KeychainFileInternals) import KeychainCrypto

/// A version 3 rotation at the header (Docs/FormatVersion3.md §2.7): every key new, the changed slot re-made, every
/// other slot — full, raw key, scoped — reached by a grant from the old root, and a rotation that cannot reach a slot
/// refused whole. Played with real header bytes: the old copy and the old password give keys that match none of the
/// new ones.
@Suite("Format v3: rotating the keys at the header, with grants to every other slot")
struct HeaderRotationV3Tests {
    static let rawKey = SymmetricKey(data: [UInt8](repeating: 0x42, count: 32))
    static let scoped = Credential.password("scoped")

    /// A header with three slots — the password's (full), a raw key's (full), and one scoped to "shared" — and a
    /// key table of the default group and "shared"; MAC'd under the log key.
    static func threeSlots() throws -> (new: NewHeaderV3, bytes: [UInt8]) {
        var generator = SystemRandomNumberGenerator()
        let new = try NewHeaderV3(credential: HeaderV3Tests.password, kdf: HeaderV3Tests.cheap, using: &generator)
        let fileID = new.header.fileID
        let shared = KeySetV3.Group(keyID: 2, name: "shared", key: SymmetricKey(size: .bits256))
        let table = KeyTableV3(lastKeyID: 2, groups: new.keyTable.groups + [shared])
        let raw = try KeySlotV3.make(
            for: .key(rawKey), kdf: .hkdf, keys: try KeySetV3.full(logKey: new.logKey, root: new.root, fileID: fileID), fileID: fileID,
            attestingWith: new.root, using: &generator)
        let scopedSlot = try HeaderV3Tests.scopedSlot(scoped, groups: [shared], in: new)
        let bytes = try HeaderV3Tests.rewritten(
            new.header, slots: new.header.slots + [raw, scopedSlot], table: try table.seal(root: new.root, fileID: fileID, using: &generator),
            logKey: new.logKey)
        return (new, bytes)
    }

    /// The next epoch's header with the rotated keys and slots, no records.
    static func nextEpoch(_ header: FileHeaderV3, _ rotated: RotatedKeysV3) throws -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let next = FileHeaderV3(
            fileID: header.fileID, epoch: header.epoch + 1, epochSalt: randomBytes(32, using: &generator), rewriteEnd: 0,
            rewriteHeadSequence: 0, rewriteHeadChain: [], tombstoneHorizonDays: header.tombstoneHorizonDays,
            sealedKeyTable: rotated.sealedKeyTable, slots: rotated.slots)
        return try HeaderV3Tests.rewritten(next, logKey: rotated.logKey)
    }

    static func allKeys(_ opened: OpenedHeaderV3) -> [[UInt8]] {
        [HeaderV3Tests.bytes(opened.slot.keys.logKey)!] + [opened.slot.keys.root].compactMap { HeaderV3Tests.bytes($0) }
            + opened.groups.map { HeaderV3Tests.bytes($0.key)! }
    }

    @Test("A password change rotates every key; each other credential opens through its grant; the old copy gives only old keys")
    func rotation() throws {
        var generator = SystemRandomNumberGenerator()
        let (_, bytes) = try Self.threeSlots()
        let oldFile = HeaderV3Tests.prefix(bytes)
        let opened = try HeaderV3Tests.open(oldFile)
        let newPassword = Credential.password("a new password")
        let rotated = try RotatedKeysV3(rotating: opened, to: newPassword, kdf: HeaderV3Tests.cheap, using: &generator)
        let newBytes = try Self.nextEpoch(opened.header, rotated)
        let newFile = HeaderV3Tests.prefix(newBytes)
        let newKeys = [HeaderV3Tests.bytes(rotated.logKey)!, HeaderV3Tests.bytes(rotated.root)!] + rotated.keyTable.groups.map { HeaderV3Tests.bytes($0.key)! }

        let changed = try HeaderV3Tests.open(newFile, newPassword)
        #expect(changed.header.epoch == 2 && changed.slotIndex == 0 && changed.slot.grantsOpened == 0)
        #expect(Self.allKeys(changed) == newKeys)
        #expect(changed.groups.map(\.name) == ["", "shared"] && changed.keyTable?.lastKeyID == 2)
        #expect(throws: KeychainError.wrongCredentials) { _ = try HeaderV3Tests.open(newFile) }

        let raw = try HeaderV3Tests.open(newFile, .key(Self.rawKey))
        #expect(raw.slotIndex == 1 && raw.slot.grantsOpened == 1 && Self.allKeys(raw) == newKeys)
        let scoped = try HeaderV3Tests.open(newFile, Self.scoped)
        #expect(scoped.slotIndex == 2 && scoped.slot.grantsOpened == 1 && scoped.keyTable == nil)
        #expect(scoped.groups.map(\.keyID) == [2] && HeaderV3Tests.bytes(scoped.groups[0].key) == newKeys[3])
        #expect(HeaderV3Tests.bytes(scoped.slot.keys.logKey) == newKeys[0])

        // The attacker's side: the old copy and the old password. None of its keys is any new key.
        let old = try HeaderV3Tests.open(oldFile)
        #expect(Set(Self.allKeys(old)).isDisjoint(with: Set(newKeys)))
        #expect(Self.allKeys(old) == Self.allKeys(opened))
        // And every slot of the new header is attested under the new root only.
        for slot in rotated.slots {
            #expect(try slot.isAttested(by: rotated.root, fileID: opened.header.fileID))
            #expect(try !slot.isAttested(by: try #require(opened.slot.keys.root), fileID: opened.header.fileID))
        }
    }

    @Test("Rotating twice chains two grants; the holder re-anchors once it has opened, and the chain is cut")
    func twoRotations() throws {
        var generator = SystemRandomNumberGenerator()
        let (_, bytes) = try Self.threeSlots()
        var file = HeaderV3Tests.prefix(bytes)
        for _ in 0..<2 {
            let opened = try HeaderV3Tests.open(file)
            file = HeaderV3Tests.prefix(try Self.nextEpoch(opened.header, try RotatedKeysV3(rotating: opened, to: HeaderV3Tests.password, kdf: HeaderV3Tests.cheap, using: &generator)))
        }
        let raw = try HeaderV3Tests.open(file, .key(Self.rawKey))
        #expect(raw.header.epoch == 3 && raw.slot.grantsOpened == 2)
        let full = try HeaderV3Tests.open(file)
        #expect(Self.allKeys(raw) == Self.allKeys(full))
        // The raw key's holder writes its slot again: re-anchored on the newest keys, no grant left.
        var slots = raw.header.slots
        slots[raw.slotIndex] = try slots[raw.slotIndex].reanchored(raw.slot, fileID: raw.header.fileID, using: &generator)
        #expect(slots[raw.slotIndex].grants.isEmpty)
        let reanchored = HeaderV3Tests.prefix(try HeaderV3Tests.rewritten(raw.header, slots: slots, logKey: raw.slot.keys.logKey))
        let again = try HeaderV3Tests.open(reanchored, .key(Self.rawKey))
        #expect(again.slot.grantsOpened == 0 && Self.allKeys(again) == Self.allKeys(full))
        // A third rotation still reaches it, from the anchor.
        let third = try RotatedKeysV3(rotating: try HeaderV3Tests.open(reanchored), to: HeaderV3Tests.password, kdf: HeaderV3Tests.cheap, using: &generator)
        let after = try HeaderV3Tests.open(HeaderV3Tests.prefix(try Self.nextEpoch(again.header, third)), .key(Self.rawKey))
        #expect(after.slot.grantsOpened == 1 && HeaderV3Tests.bytes(after.slot.keys.root) == HeaderV3Tests.bytes(third.root))
    }

    @Test("A rotation that cannot reach a slot is refused whole, naming the slot")
    func unreachableSlots() throws {
        var generator = SystemRandomNumberGenerator()
        let (new, bytes) = try Self.threeSlots()
        let opened = try HeaderV3Tests.open(HeaderV3Tests.prefix(bytes))
        let rawID = HexText.lowercase(opened.header.slots[1].slotID)
        // An attestation that does not verify (a public key put there by someone without the root).
        var slots = opened.header.slots
        slots[1] = try slots[1].attested(by: SymmetricKey(size: .bits256), fileID: new.header.fileID)
        let forged = try HeaderV3Tests.open(HeaderV3Tests.prefix(try HeaderV3Tests.rewritten(opened.header, slots: slots, logKey: new.logKey)))
        do throws(KeychainError) {
            _ = try RotatedKeysV3(rotating: forged, to: HeaderV3Tests.password, kdf: HeaderV3Tests.cheap, using: &generator)
            Issue.record("a rotation granted to an unattested slot")
        } catch {
            guard case .invalidParameter(let message) = error, message.contains(rawID) else { Issue.record("\(error)"); return }
        }
        // A slot holding 32 grants already.
        slots = opened.header.slots
        let keys = try KeySetV3.full(logKey: new.logKey, root: new.root, fileID: new.header.fileID)
        for _ in 0..<KeySlotV3.maximumGrants {
            slots[1] = try slots[1].granting(keys, previousRoot: new.root, fileID: new.header.fileID, using: &generator)
        }
        let full = try HeaderV3Tests.open(HeaderV3Tests.prefix(try HeaderV3Tests.rewritten(opened.header, slots: slots, logKey: new.logKey)))
        do throws(KeychainError) {
            _ = try RotatedKeysV3(rotating: full, to: HeaderV3Tests.password, kdf: HeaderV3Tests.cheap, using: &generator)
            Issue.record("a rotation past a slot's grant limit")
        } catch {
            guard case .limitReached(let message) = error, message.contains(rawID) else { Issue.record("\(error)"); return }
        }
        // A scoped credential cannot rotate at all.
        let scoped = try HeaderV3Tests.open(HeaderV3Tests.prefix(bytes), Self.scoped)
        #expect(throws: KeychainError.invalidParameter("")) {
            _ = try RotatedKeysV3(rotating: scoped, to: Self.scoped, kdf: HeaderV3Tests.cheap, using: &generator)
        }
    }
}
