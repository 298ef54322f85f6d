// Credential changes of a version 3 file (Docs/FormatVersion3.md §2.7): each a rewrite into the next epoch, its
// header's slots and keys as the change makes them.
extension RecordLogV3 {
    /// The header of the file in place, opened again with `credential`: a change needs what only a credential's slot
    /// gives — the root key, the slot's own keys — which this log does not keep in memory.
    ///
    /// - Throws: `.wrongCredentials` when `credential` opens no slot; `.corrupted` when what it opens is not the
    ///   header this log verified (another file, epoch or log key); what opening a header throws.
    func openedHeader(with credential: Credential) throws(KeychainError) -> OpenedHeaderV3 {
        try credential.validate()
        let file = state.file
        let opened = try OpenedHeaderV3(
            read: { (offset, count) throws(KeychainError) in HealingLog.readTolerating(file, count: count, at: offset).bytes },
            credential: credential, budget: KeyDerivationBudget(memoryLimitKiB: keyDerivationMemoryLimitKiB))
        guard opened.header.fileID == fileID, opened.header.epoch == epoch, opened.slot.keys.logKey == state.logKey else {
            throw .corrupted(offset: 0, reason: "the header no longer holds the keys this keychain verified: open it again")
        }
        return opened
    }

    /// The keys and slots of the file a change of the slots writes, and the slot it added.
    ///
    /// - Throws: `.wrongCredentials` when a credential the change names opens no slot; `.itemNotFound` for an unknown
    ///   slot id; `.invalidParameter` when no slot would be left, a credential would remove its own slot, a credential
    ///   added opens the keychain already, or a credential is scoped; what making a slot and rotating throw.
    func fileKeys(
        after change: SlotChange, using generator: inout RandomSource
    ) throws(KeychainError) -> (keys: FileKeys, added: KeySlotInfo?) {
        if state.groups.isScoped { return (try scopedFileKeys(after: change, using: &generator), nil) }
        let header = state.header
        func keys(_ rotated: RotatedKeysV3, extraSlots: [KeySlotV3] = []) throws(KeychainError) -> FileKeys {
            return FileKeys(
                fileID: fileID, logKey: rotated.logKey, root: rotated.root, groups: try AccessGroupsV3(table: rotated.keyTable, fileID: fileID),
                sealedKeyTable: rotated.sealedKeyTable, slots: rotated.slots + extraSlots, tombstoneHorizonDays: header.tombstoneHorizonDays,
                ownSlot: rotated.ownSlot)
        }
        func keeping(slots: [KeySlotV3]) throws(KeychainError) -> FileKeys {
            guard let root = state.root else {
                throw .invalidParameter("this credential reaches only some access groups; a rewrite that keeps the key table takes one that reaches the whole keychain")
            }
            return FileKeys(
                fileID: fileID, logKey: state.logKey, root: root, groups: state.groups, sealedKeyTable: header.sealedKeyTable, slots: slots,
                tombstoneHorizonDays: header.tombstoneHorizonDays)
        }
        func root(of opened: OpenedHeaderV3) throws(KeychainError) -> SymmetricKey {
            guard let root = opened.slot.keys.root else {
                throw .invalidParameter("this credential reaches only some access groups; changing the key slots takes one that reaches the whole keychain")
            }
            return root
        }
        switch change {
        case .keep:
            return (try keeping(slots: header.slots), nil)
        case .replaceRotating(let old, let new, let keyDerivation):
            let opened = try openedHeader(with: old)
            let rotated = try RotatedKeysV3(
                rotating: opened, to: new, kdf: RecordLogV2.slotKDF(for: new, keyDerivation), using: &generator)
            return (try keys(rotated), nil)
        case .rotate(let credentials, let keyDerivation):
            guard let first = credentials.first else { throw .invalidParameter("a rotation names at least one credential") }
            let opened = try openedHeader(with: credential)
            let rotated = try RotatedKeysV3(
                rotating: opened, to: first, kdf: RecordLogV2.slotKDF(for: first, keyDerivation),
                dropping: Set(header.slots.indices).subtracting([opened.slotIndex]), using: &generator)
            var extra: [KeySlotV3] = []
            for other in credentials.dropFirst() {
                extra.append(try KeySlotV3.make(
                    for: other, kdf: RecordLogV2.slotKDF(for: other, keyDerivation),
                    keys: try KeySetV3.full(logKey: rotated.logKey, root: rotated.root, fileID: fileID), fileID: fileID,
                    attestingWith: rotated.root, using: &generator))
            }
            return (try keys(rotated, extraSlots: extra), nil)
        case .add(let new, let keyDerivation):
            guard header.slots.count < Format.maximumSlots else { throw .invalidParameter("at most 16 credentials (key slots)") }
            let opened = try openedHeader(with: credential)
            let root = try root(of: opened)
            try refuseOpening(new)
            let slot = try KeySlotV3.make(
                for: new, kdf: RecordLogV2.slotKDF(for: new, keyDerivation), keys: try KeySetV3.full(logKey: state.logKey, root: root, fileID: fileID),
                fileID: fileID, attestingWith: root, using: &generator)
            return (try keeping(slots: header.slots + [slot]), KeySlotInfo(slot))
        case .replace(let old, let new, let keyDerivation):
            let opened = try openedHeader(with: old)
            let root = try root(of: opened)
            try refuseOpening(new)
            var slots = header.slots
            slots[opened.slotIndex] = try slots[opened.slotIndex].changingCredential(
                to: new, kdf: RecordLogV2.slotKDF(for: new, keyDerivation), opened: opened.slot, fileID: fileID, using: &generator)
                .attested(by: root, fileID: fileID)
            return (try keeping(slots: slots), nil)
        case .addScoped(let new, let names, let keyDerivation):
            guard header.slots.count < Format.maximumSlots else { throw .invalidParameter("at most 16 credentials (key slots)") }
            guard let root = state.root, let table = state.groups.table else {
                throw .invalidParameter("this credential reaches only some access groups; adding a credential takes one that reaches the whole keychain")
            }
            var groups: [KeySetV3.Group] = []
            for name in Set(names) {
                guard let group = table.group(named: name) else {
                    throw .invalidParameter("the keychain has no access group \"\(name)\": a credential can be scoped only to groups that hold items")
                }
                groups.append(group)
            }
            guard !groups.isEmpty else { throw .invalidParameter("a scoped credential reaches at least one access group") }
            try refuseOpening(new)
            let keys = KeySetV3(
                logKey: state.logKey, rootAgreementPublicKey: try SlotKeysV3.rootAgreementPublicKey(root: root, fileID: fileID), root: nil,
                groups: groups.sorted { $0.keyID < $1.keyID })
            let slot = try KeySlotV3.make(
                for: new, kdf: RecordLogV2.slotKDF(for: new, keyDerivation), keys: keys, fileID: fileID, attestingWith: root, using: &generator)
            return (try keeping(slots: header.slots + [slot]), KeySlotInfo(slot, names: state.groups.names))
        case .remove(let removed):
            // Removing a credential renews every key (§2.7): a removed slot put back by anyone then opens only keys
            // that nothing written afterwards is under.
            let position = try openedHeader(with: removed).slotIndex
            return (try keysDropping(position), nil)
        case .removeID(let id):
            guard let position = header.slots.firstIndex(where: { $0.slotID == id }) else { throw .itemNotFound }
            return (try keysDropping(position), nil)
        case .carry:
            throw .unsupportedFeature(offset: 0, reason: "carrying another copy's key slots into a format version 3 keychain")
        }

        func keysDropping(_ position: Int) throws(KeychainError) -> FileKeys {
            guard header.slots.count > 1 else { throw .invalidParameter("a keychain keeps at least one credential (key slot)") }
            let opened = try openedHeader(with: credential)
            let rotated = try RotatedKeysV3(
                rotating: opened, to: credential, kdf: header.slots[opened.slotIndex].kdf, dropping: [position], using: &generator)
            return try keys(rotated)
        }
    }

    /// The keys and slots of a scoped holder's rewrite (§2.6, §2.7): the key table and every slot as they are — the
    /// holder has no root key to seal or attest anything new — but for a slot whose credential changes, re-made for the
    /// new one (``KeySlotV3/changingCredential(to:kdf:opened:fileID:using:)``: its public identity and attestation
    /// kept, so that root holders go on granting to it).
    ///
    /// - Throws: `.missingEntitlement` for what takes the root key (adding, removing a credential, rotating keys);
    ///   `.invalidParameter` for a change that would renew keys (``SlotChange/replaceRotating(openedBy:with:keyDerivation:)``),
    ///   which a scoped holder cannot give the other credentials, naming the two ways on; what opening the changed
    ///   slot throws.
    func scopedFileKeys(after change: SlotChange, using generator: inout RandomSource) throws(KeychainError) -> FileKeys {
        let header = state.header
        var slots = header.slots
        switch change {
        case .keep:
            break
        case .replace(let old, let new, let keyDerivation):
            let opened = try openedHeader(with: old)
            try refuseOpening(new)
            slots[opened.slotIndex] = try slots[opened.slotIndex].changingCredential(
                to: new, kdf: RecordLogV2.slotKDF(for: new, keyDerivation), opened: opened.slot, fileID: fileID, using: &generator)
        case .replaceRotating:
            throw .invalidParameter(
                "a credential scoped to access groups cannot renew its groups' keys: the other credentials would lose them. "
                    + "changeCredentialKeepingKeys(from:to:) (kcf change-password --keep-keys) re-makes this credential's slot alone — "
                    + "an old copy of the file with the old password then still reads its groups' items written before the keys are "
                    + "next renewed — while a password change, or rotateMasterKey(credentials:), by a credential that reaches the "
                    + "whole keychain renews every key")
        case .add, .addScoped:
            throw .missingEntitlement(group: nil, operation: "adding a credential")
        case .remove, .removeID:
            throw .missingEntitlement(group: nil, operation: "removing a credential")
        case .rotate:
            throw .missingEntitlement(group: nil, operation: "rotating the keychain's keys")
        case .carry:
            throw .unsupportedFeature(offset: 0, reason: "carrying another copy's key slots into a format version 3 keychain")
        }
        return FileKeys(
            fileID: fileID, logKey: state.logKey, root: nil, groups: state.groups, sealedKeyTable: header.sealedKeyTable, slots: slots,
            tombstoneHorizonDays: header.tombstoneHorizonDays)
    }

    /// Throws when `credential` opens the keychain already: a second slot for it is not added.
    private func refuseOpening(_ credential: Credential) throws(KeychainError) {
        let opened: OpenedHeaderV3
        do throws(KeychainError) {
            opened = try openedHeader(with: credential)
        } catch .wrongCredentials {
            return
        }
        throw .invalidParameter(
            "this credential opens the keychain already (key slot \(HexText.lowercase(opened.header.slots[opened.slotIndex].slotID))); a second slot for it is not added")
    }
}
