@_spi(KeychainFileInternals) import KeychainCrypto

/// A new generation of a version 3 keychain's keys and the slots that reach it (Docs/FormatVersion3.md §2.7): what a
/// full credential's rotation writes into the next epoch's header. Every key is new — log key, root key and each
/// group's key, under the same key ids and names — so an old copy of the file with any old credential yields only
/// keys that nothing written afterwards is under.
///
/// The slot that opened is re-made for its (possibly new) credential, anchored on the new keys; every other slot
/// receives a grant of its new keys from the old root and is attested anew under the new root. A slot that cannot
/// be reached stops the whole rotation, naming it: left out, it would be revoked without anyone saying so.
///
/// ```swift
/// let rotated = try RotatedKeysV3(rotating: opened, to: .password("new"), kdf: .pbkdf2(iterations: 600_000), using: &generator)
/// // the header of the next epoch: rotated.sealedKeyTable, rotated.slots, MAC'd under rotated.logKey's keys
/// ```
struct RotatedKeysV3: Sendable {
    let logKey: SymmetricKey
    let root: SymmetricKey
    let keyTable: KeyTableV3
    let sealedKeyTable: [UInt8]
    /// In the header's order.
    let slots: [KeySlotV3]
    /// The writer's own slot when it was re-anchored on its new keys rather than granted them, with its opening.
    var ownSlot: OwnSlotV3? = nil

    /// - Parameters:
    ///   - opened: the header as a full credential opened it.
    ///   - credential: the credential the opening slot is re-made for: a new password for a password change, or the
    ///     one that opened it for a rotation alone.
    ///   - kdf: the re-made slot's KDF.
    ///   - dropping: the positions of slots left out of the new header (a credential removed); not the opening one.
    /// - Throws: `.invalidParameter` when `opened` is not a full credential's, or another slot's attestation does not
    ///   verify under the current root, or it is scoped to a key id the key table does not have (no key is granted
    ///   to it); `.limitReached` when a slot holds 32 grants already or would pass 8,192 bytes (a change of its
    ///   credential re-anchors it) — each naming the slot; as
    ///   ``KeySlotV3/changingCredential(to:kdf:opened:fileID:using:)`` for the new credential.
    init<Generator: RandomNumberGenerator>(
        rotating opened: OpenedHeaderV3, to credential: Credential, kdf: SlotKDF, dropping: Set<Int> = [],
        using generator: inout Generator
    ) throws(KeychainError) {
        guard let oldRoot = opened.slot.keys.root, let oldTable = opened.keyTable else {
            throw .invalidParameter("only a credential that reaches the whole keychain can rotate its keys; this one is scoped to some access groups")
        }
        guard !dropping.contains(opened.slotIndex) else {
            throw .invalidParameter("a credential cannot remove its own key slot: open the keychain with another credential to remove this one")
        }
        let fileID = opened.header.fileID
        logKey = SymmetricKey(size: .bits256, using: &generator)
        root = SymmetricKey(size: .bits256, using: &generator)
        keyTable = KeyTableV3(
            lastKeyID: oldTable.lastKeyID,
            groups: oldTable.groups.map { KeySetV3.Group(keyID: $0.keyID, name: $0.name, key: SymmetricKey(size: .bits256, using: &generator)) })
        sealedKeyTable = try keyTable.seal(root: root, fileID: fileID, using: &generator)
        let rho = try SlotKeysV3.rootAgreementPublicKey(root: root, fileID: fileID)
        var slots: [KeySlotV3] = []
        var own: OwnSlotV3? = nil
        for (index, slot) in opened.header.slots.enumerated() where !dropping.contains(index) {
            let keys = try Self.keys(for: slot, logKey: logKey, root: root, rootAgreementPublicKey: rho, keyTable: keyTable, fileID: fileID)
            if index == opened.slotIndex {
                let reopened = OpenedSlotV3(
                    keys: keys, anchorKey: opened.slot.anchorKey, agreementKey: opened.slot.agreementKey, slotID: slot.slotID,
                    grantsOpened: opened.slot.grantsOpened)
                let changed = try slot.changingCredentialOpened(to: credential, kdf: kdf, opened: reopened, fileID: fileID, using: &generator)
                let attested = try changed.slot.attested(by: root, fileID: fileID)
                own = OwnSlotV3(slot: attested, opened: changed.opened)
                slots.append(attested)
            } else {
                slots.append(try slot.granting(keys, previousRoot: oldRoot, fileID: fileID, using: &generator).attested(by: root, fileID: fileID))
            }
        }
        self.slots = slots
        ownSlot = own
    }

    /// The keys of a new generation that `slot` is given: a full slot the log key and the root key; a scoped slot the
    /// log key, its groups' keys from `keyTable` and the root's `ρ`.
    ///
    /// - Throws: `.invalidParameter` when the slot is scoped to a key id `keyTable` does not have, naming the slot.
    static func keys(
        for slot: KeySlotV3, logKey: SymmetricKey, root: SymmetricKey, rootAgreementPublicKey rho: [UInt8], keyTable: KeyTableV3, fileID: [UInt8]
    ) throws(KeychainError) -> KeySetV3 {
        switch slot.scope {
        case .full:
            return try KeySetV3.full(logKey: logKey, root: root, fileID: fileID)
        case .groups(let keyIDs):
            var groups: [KeySetV3.Group] = []
            for keyID in keyIDs {
                guard let group = keyTable.groups.first(where: { $0.keyID == keyID }) else {
                    throw .invalidParameter("key slot \(HexText.lowercase(slot.slotID)) is scoped to key id \(keyID), which the key table does not have: remove the slot before the keys are renewed")
                }
                groups.append(group)
            }
            return KeySetV3(logKey: logKey, rootAgreementPublicKey: rho, root: nil, groups: groups)
        }
    }
}
