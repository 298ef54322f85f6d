#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@_spi(KeychainFileInternals) import KeychainCrypto

// Writing a whole version 2 file: a new keychain, compaction and every credential change.
extension RecordLogV2 {
    /// A file `writeFile` wrote: its state, and the sealed secret of each item, in the order of the items given.
    struct WrittenFile {
        let state: FileState
        let secrets: [SealedSecret]
    }

    /// Creates a new version 2 keychain file holding no items: written under a temporary name, made durable,
    /// then linked into place so that an existing file is never replaced.
    static func create<Generator: RandomNumberGenerator>(
        at path: String, credentials: [Credential], keyDerivation: PasswordKeyDerivation, fileSystem: any FileSystem,
        clock: @escaping @Sendable () -> Date, using generator: inout Generator
    ) throws(KeychainError) -> (RecordLogV2, ItemIndex) {
        guard !credentials.isEmpty else { throw .invalidParameter("a keychain needs at least one credential") }
        guard !fileSystem.exists(path) else { throw .invalidParameter("a file already exists at \(path)") }
        let masterKey = SymmetricKey(size: .bits256, using: &generator)
        let fileID = randomBytes(16, using: &generator)
        let slots = try makeSlots(for: credentials, masterKey: masterKey, fileID: fileID, keyDerivation: keyDerivation, using: &generator)
        let written = try writeFile(
            at: path, replacing: false, fileID: fileID, epoch: 1, slots: slots, masterKey: masterKey, itemCount: 0,
            item: { _ in preconditionFailure("a new keychain has no items") }, decryptSecret: { _ throws(KeychainError) in [] },
            tombstones: [:], fileSystem: fileSystem, using: &generator)
        return (RecordLogV2(path: path, fileSystem: fileSystem, credential: credentials[0], clock: clock, state: written.state), ItemIndex())
    }

    /// Replaces the file with one in the next epoch holding the index's live items in the order they were added,
    /// the tombstones younger than the header's horizon, and the key slots `change` makes. The caller holds the
    /// lock file exclusively and has caught up; the index's items get the secrets sealed in the new file once
    /// it is in place.
    @discardableResult
    func rewrite(
        changing change: SlotChange, index: inout ItemIndex, using generator: inout RandomSource
    ) throws(KeychainError) -> KeySlotInfo? {
        try checkTailMayBeDropped()
        guard epoch < UInt64.max else { throw .limitReached("the epoch counter is exhausted") }
        let header = state.header
        let applied = try Self.applying(
            change, to: header.slots, masterKey: self.masterKey, fileID: fileID,
            positionOpenedBy: { (credential) throws(KeychainError) -> Int in try self.slotPosition(openedBy: credential) },
            positionOfID: { (id) in header.slots.firstIndex { $0.slotID == id } }, using: &generator)
        var slots = applied.slots
        let masterKey = applied.masterKey
        // A legacy slot (a version 1 file's, kept by the upgrade) that the opening credential opened becomes a
        // committed one, as the credential is at hand, with the same PBKDF2 rounds.
        if let opened = state.openedSlot, case .legacy(let legacy) = state.header.slots[opened],
           let position = slots.firstIndex(where: { $0.slotID == legacy.slotID }) {
            slots[position] = try Self.makeSlots(
                for: [credential], masterKey: masterKey, fileID: fileID, keyDerivation: .pbkdf2(.kept(legacy.iterations)),
                using: &generator)[0]
        }
        try Self.checkSlotLimits(slots)
        let horizon = Self.milliseconds(clock()) - Int64(state.header.tombstoneHorizonDays) * 86_400_000
        let tombstones = state.replayed.tombstones.filter { $0.value >= horizon && index.position(of: $0.key) == nil }
        let order = index.positionsInAddedOrder()
        var placed: [SealedSecret]? = nil
        defer {
            // The new file holds the same items in the same order: only where their secrets are sealed changed.
            if let placed {
                for (rank, secret) in placed.enumerated() { index.replaceSecret(atPosition: Int(order[rank]), with: secret) }
            }
        }
        _ = try Self.writeFile(
            at: path, replacing: true, fileID: fileID, epoch: epoch + 1, slots: slots, masterKey: masterKey,
            itemCount: order.count, item: { index.item(atPosition: Int(order[$0])) },
            decryptSecret: { (item) throws(KeychainError) in try self.decryptSecret(of: item) },
            // The same master key, file id and item ids: each secret box is valid in the new file as it is.
            copiedSecretBox: masterKey == self.masterKey ? { Array($0.secret.box) } : nil, tombstones: tombstones,
            fileSystem: fileSystem, using: &generator,
            afterRename: { (written) in
                self.adopt(written.state)
                self.noteSucceeded(change)
                placed = written.secrets
            })
        return applied.added
    }

    /// Writes a whole version 2 file — the items as commit records through a healing log, then the two header
    /// pages naming the records' end and head — under a temporary name, makes it durable and puts it at `path`
    /// (``StagedFile``). `afterRename` runs once it is in place.
    ///
    /// Each item's secret is `decryptSecret`'s, sealed anew, or — when `copiedSecretBox` is given — the box it
    /// returns, written as it is after its tag is checked (the boxes of a file with the same file id and secret
    /// key).
    static func writeFile<Generator: RandomNumberGenerator>(
        at path: String, replacing: Bool, fileID: [UInt8], epoch: UInt64, slots: [HeaderKeySlot], masterKey: SymmetricKey,
        itemCount: Int, item: (Int) -> StoredItem, decryptSecret: (StoredItem) throws(KeychainError) -> [UInt8],
        copiedSecretBox: ((StoredItem) -> [UInt8])? = nil, tombstones: [ItemID: Int64], fileSystem: any FileSystem, using generator: inout Generator,
        afterRename: (WrittenFile) -> Void = { _ in }
    ) throws(KeychainError) -> WrittenFile {
        let epochSalt = randomBytes(32, using: &generator)
        let draft = FileHeaderV2(
            fileID: fileID, epoch: epoch, epochSalt: epochSalt, rewriteEnd: 0, rewriteHeadSequence: 0, rewriteHeadChain: [],
            tombstoneHorizonDays: FileHeaderV2.defaultTombstoneHorizonDays, slots: slots)
        let epochKeys = try draft.epochKeys(masterKey: masterKey)
        let initialChain = draft.initialChainValue(headerKey: epochKeys.header)
        let keys = try RecordKeysV2(
            fileID: fileID, epoch: epoch, recordKey: epochKeys.record,
            secretKey: try RecordKeysV2.secretKey(masterKey: masterKey, fileID: fileID))
        var loaded: WrittenFile? = nil
        _ = try StagedFile.write(
            at: path, temporary: StagedFile.temporaryName(for: path, using: &generator), replacing: replacing, fileSystem: fileSystem,
            body: { (staging) throws(KeychainError) -> (header: FileHeaderV2, bytes: [UInt8], log: HealingLog, head: Head, secrets: [SealedSecret]) in
                // The prefix is zeros — two empty commit slots — until the header pages are written last.
                try staging.truncate(to: HealingLayout.logStart)
                let log = HealingLog(creating: staging, headerKey: epochKeys.header, epoch: epoch)
                var head = Head(epoch: epoch, sequence: 0, chainValue: initialChain)
                var secrets: [SealedSecret] = []
                secrets.reserveCapacity(itemCount)
                func commit(_ entries: inout [EntryV2]) throws(KeychainError) {
                    defer {
                        EntryV2.wipeSecrets(&entries)
                        entries.removeAll(keepingCapacity: true)
                    }
                    try verifyCopiedSecretBoxes(entries, keys: keys)
                    let entryBytes = entries.compactMap { (entry) -> Int? in
                        switch entry {
                        case .put, .copy: return entry.pageByteCount
                        case .delete, .tombstone: return nil
                        }
                    }
                    let transaction = try RecordV2Encoder.encodeTransaction(
                        entries, firstSequence: head.sequence + 1, previousChain: head.chainValue, keys: keys, using: &generator)
                    var bytes: [UInt8] = []
                    let first = secrets.count
                    for record in transaction.records {
                        secrets += try sealedSecrets(of: record, entryBytes: entryBytes[(secrets.count - first)...])
                        bytes += record
                    }
                    head = Head(epoch: epoch, sequence: head.sequence + UInt64(transaction.records.count), chainValue: transaction.chain)
                    try log.append(bytes, committedEnd: log.writtenEnd + bytes.count, headSequence: head.sequence, headChain: head.chainValue)
                }
                try RewriteEntries.forEachBatch(
                    itemCount: itemCount, item: item, decryptSecret: decryptSecret, copiedSecretBox: copiedSecretBox,
                    tombstones: tombstones, commit: commit)
                if log.newest == nil {
                    // A file with no records yet still gets a commit slot: "no slot reads" then always means damage.
                    try log.commit(
                        writtenEnd: 0, committedEnd: 0, headSequence: head.sequence, headChain: head.chainValue, parity: ChunkParity(),
                        lastWrite: 0..<0)
                }
                guard secrets.count == itemCount else {
                    throw KeychainError.invalidParameter("internal error: \(secrets.count) of \(itemCount) items written to a new file")
                }
                let header = FileHeaderV2(
                    fileID: fileID, epoch: epoch, epochSalt: epochSalt, rewriteEnd: UInt64(log.writtenEnd), rewriteHeadSequence: head.sequence,
                    rewriteHeadChain: head.chainValue, tombstoneHorizonDays: draft.tombstoneHorizonDays, slots: slots)
                let headerBytes = header.encode(headerKey: epochKeys.header)
                // What readers will refuse is refused here, before the file is put in place.
                do throws(KeychainError) {
                    _ = try FileHeaderV2.parse(headerBytes)
                } catch {
                    throw KeychainError.limitReached("the key slots do not fit a version 2 header: \(error)")
                }
                let page = HeaderPage.encode(headerBytes)
                for offset in OpenedHeaderV2.pageOffsets {
                    try page.withBytes { (raw) throws(KeychainError) in try staging.writeAll(raw, at: offset) }
                }
                return (header, headerBytes, log, head, secrets)
            },
            afterPlacing: { (written, staging, identity) in
                let state = FileState(
                    file: staging, identity: identity, header: written.header, headerBytes: written.bytes, masterKey: masterKey, headerKey: epochKeys.header,
                    keys: keys, initialChain: initialChain, log: written.log, pagesIntact: [true, true],
                    replayed: ReplayV2.Outcome(head: written.head, end: written.log.writtenEnd, tornTail: nil, tombstones: tombstones, repairs: []),
                    size: (try? staging.size()) ?? HealingLayout.physicalEnd(ofLog: written.log.writtenEnd),
                    headerSeen: HeaderFingerprint(written: HeaderPage.encode(written.bytes), at: OpenedHeaderV2.pageOffsets))
                let file = WrittenFile(state: state, secrets: written.secrets)
                loaded = file
                afterRename(file)
            })
        guard let loaded else { throw .invalidParameter("internal error: a new file was written but not put in place") }
        return loaded
    }

    /// Checks the tag of every secret box `entries` copy, eight in one run of the cipher, so that a rewrite
    /// writes only boxes that still authenticate, as it does when it decrypts them.
    ///
    /// - Throws: `.corrupted` naming the item whose box does not authenticate.
    static func verifyCopiedSecretBoxes(_ entries: [EntryV2], keys: RecordKeysV2) throws(KeychainError) {
        var buffer: [UInt8] = []
        var boxes: [(box: Range<Int>, id: ItemID)] = []
        for case .copy(let id, _, let box) in entries {
            boxes.append((buffer.count..<(buffer.count + box.count), id))
            buffer += box
        }
        guard !boxes.isEmpty else { return }
        do {
            try RecordV2Decoder.verifySecrets(boxes, in: buffer, keys: keys)
        } catch {
            // The offset is in the scratch buffer, not in a file: only the reason, which names the item, is kept.
            guard case .corrupted(_, let reason) = error else { throw error }
            throw .corrupted(offset: 0, reason: "\(reason), in memory: the file was not replaced")
        }
    }

    // MARK: Key slots

    /// The key slots and master key `change` makes of `slots`, and the slot it added. `positionOpenedBy` finds the
    /// slot a credential opens (or throws `.wrongCredentials`); `positionOfID` the slot with an id.
    ///
    /// - Throws: `.wrongCredentials`, `.itemNotFound` for an unknown slot id, `.invalidParameter` when no slot would
    ///   be left, a rotation names no credential or a rotating replacement would leave other slots out, what making a
    ///   slot throws.
    static func applying(
        _ change: SlotChange, to slots: [HeaderKeySlot], masterKey: SymmetricKey, fileID: [UInt8],
        positionOpenedBy: (Credential) throws(KeychainError) -> Int, positionOfID: ([UInt8]) -> Int?,
        using generator: inout RandomSource
    ) throws(KeychainError) -> (slots: [HeaderKeySlot], masterKey: SymmetricKey, added: KeySlotInfo?) {
        var slots = slots
        var masterKey = masterKey
        var added: KeySlotInfo? = nil
        switch change {
        case .keep:
            break
        case .addScoped:
            throw .invalidParameter("a credential scoped to access groups needs format version 3, whose groups are sealed under keys of their own")
        case .add(let credential, let keyDerivation):
            // The limits are checked before the new slot's key is derived, which may take long.
            try credential.validate()
            try checkSlotLimits(works: slots.map(\.work) + [slotKDF(for: credential, keyDerivation).work])
            try refuseDuplicate(of: credential, positionOpenedBy: positionOpenedBy, in: slots)
            let slot = try makeSlots(for: [credential], masterKey: masterKey, fileID: fileID, keyDerivation: keyDerivation, using: &generator)[0]
            slots.append(slot)
            added = KeySlotInfo(slot)
        case .remove(let credential):
            slots.remove(at: try positionOpenedBy(credential))
        case .removeID(let id):
            guard let position = positionOfID(id) else { throw .itemNotFound }
            slots.remove(at: position)
        case .carry(let carried):
            for slot in carried where !slots.contains(where: { $0.slotID == slot.slotID }) { slots.append(slot) }
            try checkSlotLimits(works: slots.map(\.work))
        case .replace(let old, let new, let keyDerivation):
            let position = try positionOpenedBy(old)
            try new.validate()
            var works = slots.map(\.work)
            works[position] = slotKDF(for: new, keyDerivation).work
            try checkSlotLimits(works: works)
            slots[position] = try makeSlots(for: [new], masterKey: masterKey, fileID: fileID, keyDerivation: keyDerivation, using: &generator)[0]
        case .replaceRotating(let old, let new, let keyDerivation):
            // Refused before any key is derived: the other slots could not be given the new master key.
            guard slots.count == 1 else { throw SlotChange.refusal(otherSlots: slots.count - 1) }
            _ = try positionOpenedBy(old)
            masterKey = SymmetricKey(size: .bits256, using: &generator)
            slots = try makeSlots(for: [new], masterKey: masterKey, fileID: fileID, keyDerivation: keyDerivation, using: &generator)
        case .rotate(let credentials, let keyDerivation):
            guard !credentials.isEmpty else { throw .invalidParameter("rotating the master key needs at least one credential") }
            masterKey = SymmetricKey(size: .bits256, using: &generator)
            slots = try makeSlots(for: credentials, masterKey: masterKey, fileID: fileID, keyDerivation: keyDerivation, using: &generator)
        }
        guard !slots.isEmpty else {
            throw .invalidParameter("this is the last key slot: without it nothing could open the keychain")
        }
        return (slots, masterKey, added)
    }

    /// Committed key slots wrapping `masterKey`, one for each credential (`keyDerivation`'s KDF for passwords, HKDF
    /// for keys).
    static func makeSlots<Generator: RandomNumberGenerator>(
        for credentials: [Credential], masterKey: SymmetricKey, fileID: [UInt8], keyDerivation: PasswordKeyDerivation,
        using generator: inout Generator
    ) throws(KeychainError) -> [HeaderKeySlot] {
        for credential in credentials { try credential.validate() }
        // The limits are checked before any key is derived: a refusal comes at once, not after the derivations.
        try checkSlotLimits(works: credentials.map { slotKDF(for: $0, keyDerivation).work })
        var slots: [HeaderKeySlot] = []
        for credential in credentials {
            let kdf = slotKDF(for: credential, keyDerivation)
            slots.append(.committed(try CommittedKeySlot.make(for: credential, kdf: kdf, masterKey: masterKey, fileID: fileID, using: &generator)))
        }
        try checkSlotLimits(slots)
        return slots
    }

    /// The KDF of a new committed slot for `credential`: `keyDerivation`'s for a password, HKDF for a key.
    static func slotKDF(for credential: Credential, _ keyDerivation: PasswordKeyDerivation) -> SlotKDF {
        credential.slotType == .password ? keyDerivation.slotKDF : .hkdf
    }

    /// The header limits on key slots (SPEC §20.1): 1 to 16 slots, at most 20,000,000 PBKDF2 iterations and 2²⁶ KiB
    /// of Argon2id memory × passes in all.
    static func checkSlotLimits(_ slots: [HeaderKeySlot]) throws(KeychainError) {
        try checkSlotLimits(works: slots.map(\.work))
    }

    /// ``checkSlotLimits(_:)`` for slots known by what deriving each one's key costs, before any is derived.
    static func checkSlotLimits(works: [(iterations: UInt64, argon2KiB: UInt64)]) throws(KeychainError) {
        guard !works.isEmpty else { throw .invalidParameter("a keychain needs at least one key slot") }
        guard works.count <= Format.maximumSlots else { throw .limitReached("at most 16 credentials (key slots)") }
        let total = works.reduce(UInt64(0)) { $0 + $1.iterations }
        guard total <= Format.maximumTotalIterations else {
            throw .limitReached("the password slots would need \(total) PBKDF2 iterations together; the limit is 20,000,000")
        }
        let argon2 = works.reduce(UInt64(0)) { $0 + $1.argon2KiB }
        guard argon2 <= UInt64(KDF.Argon2.maximumWorkKiB) else {
            throw .limitReached(
                "the Argon2id password slots would need \(argon2) KiB of memory × passes together; the limit is \(KDF.Argon2.maximumWorkKiB) KiB")
        }
    }

    /// Throws when `credential` already opens one of `slots`: a second slot for it would outlive the first's
    /// removal, so that `removeCredential` would seem to revoke it and not.
    static func refuseDuplicate(
        of credential: Credential, positionOpenedBy: (Credential) throws(KeychainError) -> Int, in slots: [HeaderKeySlot]
    ) throws(KeychainError) {
        let position: Int
        do throws(KeychainError) {
            position = try positionOpenedBy(credential)
        } catch {
            if case .wrongCredentials = error { return }
            throw error
        }
        throw .invalidParameter(
            "this credential opens the keychain already (key slot \(KeySlotInfo(slots[position]).hexID)); a second slot for it is not added")
    }

    /// The position of the first slot `credential` opens.
    func slotPosition(openedBy credential: Credential) throws(KeychainError) -> Int {
        try credential.validate()
        for (position, slot) in state.header.slots.enumerated() {
            switch slot {
            case .committed(let committed):
                guard committed.type == credential.slotType else { continue }
                if try committed.open(with: credential, fileID: fileID, slotOffset: state.header.slotOffset(position)) != nil { return position }
            case .legacy(let legacy):
                guard legacy.type == credential.slotType else { continue }
                if try legacy.unwrap(with: credential, fileID: fileID) != nil { return position }
            }
        }
        throw .wrongCredentials
    }

    func keySlotInfos() -> [KeySlotInfo] { state.header.slots.map(KeySlotInfo.init) }

    func removeStrayTemporaryFiles() {
        RecordLog.removeStrayTemporaryFiles(besides: path, fileSystem: fileSystem)
    }
}

extension RecordLogV2: KeychainLog {}
