@_spi(KeychainFileInternals) import KeychainCrypto

/// The header of a new version 3 keychain and the keys it was made with (Docs/FormatVersion3.md §2.9): a random
/// file id, epoch 1 with a random salt and no records (rewrite end 0, head (0, C0)), a random log key `K_log` and
/// root key `R`, the default group (the empty name) under key id 1 with a random key, and one full slot for the
/// creating credential, attested under `R`.
///
/// ```swift
/// var generator = SystemRandomNumberGenerator()
/// let new = try NewHeaderV3(credential: .password("…"), kdf: .pbkdf2(iterations: 600_000), using: &generator)
/// let file = HeaderRunV3.encode(new.bytes)       // run A; run B is the same bytes
/// ```
struct NewHeaderV3: Sendable {
    let header: FileHeaderV3
    /// The encoded header, MAC and checksum included.
    let bytes: [UInt8]
    let logKey: SymmetricKey
    let root: SymmetricKey
    let keyTable: KeyTableV3
    /// The one slot, with its opening by `credential` (``OwnSlotV3``).
    let ownSlot: OwnSlotV3

    /// - Throws: `.invalidParameter` when `kdf` does not fit the credential (see ``KeySlotV3/make(for:kdf:keys:fileID:attestingWith:using:)``);
    ///   `.limitReached` from Argon2id's memory.
    init<Generator: RandomNumberGenerator>(
        credential: Credential, kdf: SlotKDF, tombstoneHorizonDays: UInt32 = FileHeaderV2.defaultTombstoneHorizonDays,
        using generator: inout Generator
    ) throws(KeychainError) {
        guard FileHeaderV2.tombstoneHorizonRange.contains(tombstoneHorizonDays) else {
            throw .invalidParameter("a tombstone horizon of \(tombstoneHorizonDays) days is outside 1 … 36,525")
        }
        let fileID = randomBytes(16, using: &generator)
        let epochSalt = randomBytes(32, using: &generator)
        logKey = SymmetricKey(size: .bits256, using: &generator)
        root = SymmetricKey(size: .bits256, using: &generator)
        keyTable = KeyTableV3(lastKeyID: 1, groups: [KeySetV3.Group(keyID: 1, name: KeyTableV3.defaultGroupName, key: SymmetricKey(size: .bits256, using: &generator))])
        ownSlot = try KeySlotV3.makeOpened(
            for: credential, kdf: kdf, keys: try KeySetV3.full(logKey: logKey, root: root, fileID: fileID), fileID: fileID,
            attestingWith: root, using: &generator)
        let slot = ownSlot.slot
        let keys = try LogKeysV3(logKey: logKey, fileID: fileID, epoch: 1, epochSalt: epochSalt)
        let draft = FileHeaderV3(
            fileID: fileID, epoch: 1, epochSalt: epochSalt, rewriteEnd: 0, rewriteHeadSequence: 0,
            rewriteHeadChain: [UInt8](repeating: 0, count: 16), tombstoneHorizonDays: tombstoneHorizonDays,
            sealedKeyTable: try keyTable.seal(root: root, fileID: fileID, using: &generator), slots: [slot])
        header = FileHeaderV3(
            fileID: fileID, epoch: 1, epochSalt: epochSalt, rewriteEnd: 0, rewriteHeadSequence: 0,
            rewriteHeadChain: draft.initialChainValue(headerKey: keys.header), tombstoneHorizonDays: tombstoneHorizonDays,
            sealedKeyTable: draft.sealedKeyTable, slots: [slot])
        bytes = try header.encode(headerKey: keys.header)
    }
}
