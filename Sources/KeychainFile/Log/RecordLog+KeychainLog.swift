import KeychainCrypto

/// Version 1's log as `Keychain` uses it (``KeychainLog``).
extension RecordLog: KeychainLog {
    var formatVersion: Int { Int(Format.version) }
    var fileID: [UInt8] { header.fileID }
    var epoch: UInt64 { header.epoch }
    /// Version 1 keeps no redundancy: nothing is ever repaired.
    var repairs: RepairReport { .none }

    /// Version 1 keeps no parity: there is nothing to compare or rewrite.
    func scrubParity(_ index: inout ItemIndex, rewriting: Bool) throws(KeychainError) -> ParityReport { .none }

    func append<Entries: RandomAccessCollection<LogEntry>>(
        _ entries: Entries, before: (ItemID) -> StoredItem?, using generator: inout RandomSource
    ) throws(KeychainError) -> AppendedSecrets where Entries.Index == Int {
        let encoded: RecordEncoder.Encoded = try append(entries, using: &generator)
        return AppendedSecrets(count: encoded.puts.count) { encoded.secret(of: encoded.puts[$0]) }
    }

    func decryptSecret(of item: StoredItem) throws(KeychainError) -> [UInt8] {
        try decryptSecret(item.secret)
    }

    func secretOpener() -> @Sendable (StoredItem) throws(KeychainError) -> [UInt8] {
        let context = self.context
        return { (item) throws(KeychainError) in try Self.decryptSecret(item.secret, context: context) }
    }

    func keySlotInfos() -> [KeySlotInfo] { header.slots.map(KeySlotInfo.init) }

    /// Version 1 is never merged into, so its history is never compared (SPEC.md §43.9).
    var copyHistory: CopyHistory? { nil }

    func replayEarlierState(endingBy limit: Int) throws(KeychainError) -> (index: ItemIndex, tombstones: [ItemID: Int64], end: Int) {
        throw .unsupportedFeature(offset: 0, reason: "reading an earlier state of a format version 1 log, which a merge never needs")
    }

    @discardableResult
    func rewrite(
        changing change: SlotChange, index: inout ItemIndex, using generator: inout RandomSource
    ) throws(KeychainError) -> KeySlotInfo? {
        var slots = header.slots
        var masterKey = self.masterKey
        var added: KeySlotInfo? = nil
        switch change {
        case .keep:
            break
        case .addScoped:
            throw .invalidParameter("a credential scoped to access groups needs format version 3, whose groups are sealed under keys of their own")
        case .add(let credential, let keyDerivation):
            try credential.validate()
            if let found = try Self.slotIndex(in: header, openedBy: credential) {
                throw .invalidParameter(
                    "this credential opens the keychain already (key slot \(KeySlotInfo(header.slots[found.index]).hexID)); a second slot for it is not added")
            }
            let slot = try makeSlot(for: credential, keyDerivation: keyDerivation, using: &generator)
            slots.append(slot)
            try Self.checkSlotLimits(slots)
            added = KeySlotInfo(slot)
        case .remove(let credential):
            slots = try slotsWithout(position: try slotPosition(openedBy: credential))
        case .removeID(let id):
            guard let position = slots.firstIndex(where: { $0.slotID == id }) else { throw .itemNotFound }
            slots = try slotsWithout(position: position)
        case .carry:
            throw .unsupportedFeature(offset: 0, reason: "carrying another copy's key slots into a format version 1 keychain")
        case .replace(let old, let new, let keyDerivation):
            let position = try slotPosition(openedBy: old)
            slots[position] = try makeSlot(for: new, keyDerivation: keyDerivation, using: &generator)
            try Self.checkSlotLimits(slots)
        case .replaceRotating(let old, let new, let keyDerivation):
            // Refused before any key is derived: the other slots could not be given the new master key.
            guard slots.count == 1 else { throw SlotChange.refusal(otherSlots: slots.count - 1) }
            _ = try slotPosition(openedBy: old)
            try new.validate()
            let iterations = try Self.iterations(of: keyDerivation, for: [new])
            masterKey = SymmetricKey(size: .bits256, using: &generator)
            slots = try Self.makeSlots(for: [new], masterKey: masterKey, fileID: header.fileID, iterations: iterations, using: &generator)
        case .rotate(let credentials, let keyDerivation):
            guard !credentials.isEmpty else { throw .invalidParameter("rotating the master key needs at least one credential") }
            let iterations = try Self.iterations(of: keyDerivation, for: credentials)
            masterKey = SymmetricKey(size: .bits256, using: &generator)
            slots = try Self.makeSlots(for: credentials, masterKey: masterKey, fileID: header.fileID, iterations: iterations, using: &generator)
        }
        // Once the new file is in place (also when a later step throws), the kept credential follows the change.
        defer { if header.slots == slots { noteSucceeded(change) } }
        try rewrite(slots: slots, masterKey: masterKey, index: &index, using: &generator)
        return added
    }

    func statistics(of index: ItemIndex) -> KeychainStatistics {
        let live = headerLength + index.liveEntryBytes
        return KeychainStatistics(
            itemCount: index.count, liveBytes: live, deadBytes: max(0, end - live),
            fileSize: end + (tornTail?.byteCount ?? 0), epoch: header.epoch)
    }

    private func makeSlot(
        for credential: Credential, keyDerivation: PasswordKeyDerivation, using generator: inout RandomSource
    ) throws(KeychainError) -> KeySlot {
        try credential.validate()
        let iterations = try Self.iterations(of: keyDerivation, for: [credential])
        return try KeySlot.make(for: credential, masterKey: masterKey, fileID: header.fileID, iterations: iterations, using: &generator)
    }

    /// The PBKDF2 rounds of new slots for `credentials` in a file kept at version 1, which cannot hold Argon2id:
    /// asking for it there is refused when a password slot would be made.
    private static func iterations(
        of keyDerivation: PasswordKeyDerivation, for credentials: [Credential]
    ) throws(KeychainError) -> PasswordIterations {
        guard credentials.contains(where: { $0.slotType == .password }) else { return .standard }
        return try keyDerivation.version1Iterations(because: "this file is kept at format version 1 (keepsFormatVersion)")
    }

    private func slotPosition(openedBy credential: Credential) throws(KeychainError) -> Int {
        try credential.validate()
        guard let found = try Self.slotIndex(in: header, openedBy: credential) else { throw .wrongCredentials }
        return found.index
    }

    private func slotsWithout(position: Int) throws(KeychainError) -> [KeySlot] {
        var slots = header.slots
        guard slots.count > 1 else {
            throw .invalidParameter("this is the last key slot: without it nothing could open the keychain")
        }
        slots.remove(at: position)
        return slots
    }
}
