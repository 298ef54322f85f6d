@_spi(KeychainFileInternals) import KeychainCrypto

// Adding access groups (Docs/FormatVersion3.md §2.11): a change to the key table, and so a new root key (§2.7).
extension RotatedKeysV3 {
    /// The keys of the next epoch when groups are added: the log key and every group key kept, the new groups under
    /// the next key ids with random keys, and a **new root key** sealing the table, so that an older table — sealed
    /// under an older root — never opens again. Every other slot receives a grant of its keys (a full slot `K_log`
    /// and the new root; a scoped slot `K_log` and its groups' keys, with the new root's `ρ`) from the current root,
    /// and is attested under the new one: no credential is needed, and scoped holders follow with the keys they hold.
    /// The holder's own slot, when `own` is its current opening, is re-anchored on its new keys instead (its grants
    /// cut), so that adding groups never fills it with grants; without one it is granted to like the others.
    ///
    /// - Parameters:
    ///   - header: the header in place, whose slots are granted to.
    ///   - logKey: `K_log`, kept.
    ///   - root: the current root key, which every slot's attestation must verify under.
    ///   - keyTable: the current key table, opened under `root`.
    ///   - names: the groups to add, none of which the table has.
    ///   - own: the writer's own slot and its opening, if the log has one that is current.
    /// - Throws: `.invalidParameter` for a name the table has, twice, or longer than 255 bytes, or a slot that
    ///   cannot be granted to (``KeySlotV3/granting(_:previousRoot:fileID:using:)``); `.limitReached` past 255 key
    ///   ids, or for a slot that holds 32 grants.
    init<Generator: RandomNumberGenerator>(
        renewingRootOf header: FileHeaderV3, logKey: SymmetricKey, root oldRoot: SymmetricKey, keyTable oldTable: KeyTableV3,
        adding names: [String], reanchoring own: OwnSlotV3? = nil, using generator: inout Generator
    ) throws(KeychainError) {
        let fileID = header.fileID
        var groups = oldTable.groups
        var lastKeyID = oldTable.lastKeyID
        for name in names {
            guard oldTable.group(named: name) == nil, !groups.contains(where: { $0.name == name }) else {
                throw .invalidParameter("the access group \"\(name)\" is in the keychain already, or named twice")
            }
            guard name.utf8.count <= 255 else { throw .invalidParameter("an access group's name is at most 255 bytes of UTF-8") }
            guard lastKeyID < UInt8.max else {
                throw .limitReached("a keychain gives out at most 255 access group key ids, and this one has given them all")
            }
            lastKeyID += 1
            groups.append(KeySetV3.Group(keyID: lastKeyID, name: name, key: SymmetricKey(size: .bits256, using: &generator)))
        }
        let root = SymmetricKey(size: .bits256, using: &generator)
        let keyTable = KeyTableV3(lastKeyID: lastKeyID, groups: groups)
        self.logKey = logKey
        self.root = root
        self.keyTable = keyTable
        sealedKeyTable = try keyTable.seal(root: root, fileID: fileID, using: &generator)
        let rho = try SlotKeysV3.rootAgreementPublicKey(root: root, fileID: fileID)
        var slots: [KeySlotV3] = []
        var reanchored: OwnSlotV3? = nil
        for slot in header.slots {
            let keys = try Self.keys(for: slot, logKey: logKey, root: root, rootAgreementPublicKey: rho, keyTable: keyTable, fileID: fileID)
            if let own, slot == own.slot {
                let written = try own.reanchored(on: keys, fileID: fileID, using: &generator)
                let attested = try written.slot.attested(by: root, fileID: fileID)
                reanchored = OwnSlotV3(slot: attested, opened: written.opened)
                slots.append(attested)
            } else {
                slots.append(try slot.granting(keys, previousRoot: oldRoot, fileID: fileID, using: &generator).attested(by: root, fileID: fileID))
            }
        }
        self.slots = slots
        ownSlot = reanchored
    }
}
