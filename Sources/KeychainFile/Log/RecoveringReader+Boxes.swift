@_spi(KeychainFileInternals) import KeychainCrypto

/// Checking a damaged file's boxes: verifying each against its chain, repairing tags the next box confirms,
/// and naming the items of boxes that do not authenticate.
extension RecoveringReader {
    func previousChain(_ slot: Slot) -> ChainValue {
        slot.chainEnd == headerLength ? ChainValue(initialChain) : ChainValue(bytes, endingAt: slot.chainEnd)
    }

    /// Whether the slot's box authenticates with its previous chain value as stored (or `chain`). A `candidate`
    /// check (a guessed length, field, tag or id) is charged to the budget, and fails once it is spent.
    mutating func verify(_ slot: Slot, chain: ChainValue? = nil, candidate: Bool = false) -> Bool {
        guard slot.role != .secret || slot.itemID != nil else { return false }
        if candidate {
            guard budget > 0 else { return false }
            budget -= slot.range.count + BoxAAD.size
        }
        let previous = chain ?? previousChain(slot)
        return slot.record.withAAD(entryIndex: slot.entryIndex, role: slot.role, itemID: slot.itemID, previousChain: previous) { aad in
            bytes.withUnsafeBytes { all in
                (try? AES.GCM.verify(UnsafeRawBufferPointer(rebasing: all[slot.range]), using: context.boxKey, authenticating: aad)) != nil
            }
        }
    }

    /// The plaintext of the slot's box, decrypted without its tag checked: only to compute candidate tags and ids
    /// that another box's tag must then confirm.
    func unverifiedPlaintext(_ slot: Slot) -> [UInt8] {
        var plaintext = [UInt8](repeating: 0, count: slot.range.count - Format.boxOverhead)
        bytes.withUnsafeBytes { all in
            plaintext.withUnsafeMutableBytes { output in
                _ = try? AES.GCM.decryptVerified(UnsafeRawBufferPointer(rebasing: all[slot.range]), using: context.boxKey, into: output)
            }
        }
        return plaintext
    }

    /// The tag the slot's box would have if its nonce and ciphertext are what was sealed: the plaintext sealed
    /// again with the stored nonce and the slot's associated data.
    func computedTag(_ slot: Slot, plaintext: [UInt8]) -> [UInt8]? {
        guard slot.role != .secret || slot.itemID != nil,
              let nonce = try? AES.GCM.Nonce(data: bytes[slot.range.lowerBound..<(slot.range.lowerBound + 12)]) else { return nil }
        var box = [UInt8](repeating: 0, count: slot.range.count)
        let sealed: Bool = slot.record.withAAD(
            entryIndex: slot.entryIndex, role: slot.role, itemID: slot.itemID, previousChain: previousChain(slot)
        ) { aad in
            plaintext.withUnsafeBytes { input in
                box.withUnsafeMutableBytes { output in
                    (try? AES.GCM.seal(input, using: context.boxKey, nonce: nonce, authenticating: aad, into: output)) != nil
                }
            }
        }
        return sealed ? Array(box.suffix(16)) : nil
    }

    /// A box that fails followed, in the chain, by one that fails: if the first one's computed tag makes the
    /// second authenticate, only the first one's stored tag was damaged — both are authentic, and the tag is
    /// repaired in place.
    mutating func repairTags() {
        guard slots.count >= 2 else { return }
        for index in 0..<(slots.count - 1) where !slots[index].verified && !slots[index + 1].verified {
            guard slots[index + 1].chainEnd == slots[index].range.upperBound, budget > 0 else { continue }
            var plaintext = unverifiedPlaintext(slots[index])
            let tag = computedTag(slots[index], plaintext: plaintext)
            var next = slots[index + 1]
            if next.role == .secret && next.itemID == nil && slots[index].role == .attributes && plaintext.count >= 17 {
                next.itemID = try? ItemID(bytes: plaintext[1..<17])
            }
            // Not yet authenticated, and possibly a secret: not kept.
            plaintext.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
            guard let tag else { continue }
            budget -= slots[index].range.count
            guard verify(next, chain: ChainValue(tag), candidate: true) else { continue }
            bytes.replaceSubrange((slots[index].range.upperBound - 16)..<slots[index].range.upperBound, with: tag)
            repairedSlots.insert(index)
            slots[index].verified = verify(slots[index])
            next.verified = verify(next)
            slots[index + 1] = next
            if slots[index].verified { decode(index) }
            if next.verified { decode(index + 1) }
            // A secret box after attributes that now decode names their item.
            if slots[index].role == .attributes, let id = attributes[index]?.id, index + 1 < slots.count, slots[index + 1].role == .secret {
                slots[index + 1].itemID = id
                if !slots[index + 1].verified { slots[index + 1].verified = verify(slots[index + 1]) }
            }
        }
    }

    /// Names the items of damaged boxes where an id read elsewhere in the file authenticates them: a secret box
    /// whose attributes box is damaged, and a deletion whose ciphertext is damaged (its tag, over the ciphertext
    /// of the id, still verifies when the id is sealed again with its nonce).
    mutating func identifyDamagedItems() {
        var candidates = Set(attributes.values.map(\.id))
        candidates.formUnion(deletedIDs.values)
        let known = Array(candidates)
        guard !known.isEmpty else { return }
        for index in slots.indices where !slots[index].verified {
            switch slots[index].role {
            case .secret where slots[index].itemID == nil:
                for id in known where budget > 0 {
                    var slot = slots[index]
                    slot.itemID = id
                    if verify(slot, candidate: true) {
                        slots[index].itemID = id
                        break
                    }
                }
            case .deletion:
                for id in known where budget > 0 {
                    budget -= slots[index].range.count + BoxAAD.size
                    if computedTag(slots[index], plaintext: id.bytes) == Array(bytes[(slots[index].range.upperBound - 16)..<slots[index].range.upperBound]) {
                        deletedIDs[index] = id
                        break
                    }
                }
            default:
                break
            }
        }
    }
}
