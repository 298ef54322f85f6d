/// What a merge reads of one copy (SPEC.md §43.2), against a snapshot of the keychain merged into: each item stored
/// exactly as there (the same attribute bytes and the same sealed secret box, so the same version) is only counted, not
/// decrypted; an item with the same attribute bytes and another box (sealed anew by a rewrite) is the same version when
/// both boxes open to the same secret; every other item is read in full, with its secret. Two copies of a keychain
/// share most of their items, and a merge's time then goes to what differs.
struct MergeSide {
    /// The entries of the items that differ from the snapshot's (or that it lacks), and of the tombstones.
    var entries: [ItemID: MergeEntry] = [:]
    /// The ids of the items stored exactly as in the snapshot: their versions are the snapshot's.
    var sameAsSnapshot: Set<ItemID> = []
    /// The ids of the snapshot's items this copy does not hold.
    var missing: [ItemID] = []
    /// The copy's tombstones.
    var tombstones: [ItemID: Int64] = [:]
    /// The copy's file id.
    var fileID: [UInt8] = []
    /// What a merge compares of the copy's log to find the history it shares with the keychain merged into (SPEC.md
    /// §43.9); nil when there is nothing to compare.
    var history: CopyHistory? = nil
    /// The ids of the copy's key slots, and — version 2 — the slots as its header holds them with the master key that
    /// authenticated it: what a merge carries over (SPEC.md §43.1), read with the rest, never after the merge commits.
    var slotIDs: Set<[UInt8]> = []
    var headerSlots: (slots: [HeaderKeySlot], masterKey: SymmetricKey)? = nil

    /// Reads `index` (with `tombstones`) against `snapshot`; `decryptSecret` opens a secret of `index`, and
    /// `openSnapshotSecret`, when given, one of `snapshot`.
    init(
        index: ItemIndex, tombstones: [ItemID: Int64], fileID: [UInt8], against snapshot: ItemIndex,
        openSnapshotSecret: ((StoredItem) throws(KeychainError) -> [UInt8])? = nil,
        decryptSecret: (StoredItem) throws(KeychainError) -> [UInt8]
    ) throws(KeychainError) {
        self.tombstones = tombstones
        self.fileID = fileID
        for item in index.itemsInAddedOrder() {
            let held = snapshot[item.id]
            if let held, Self.storedAlike(held, item) {
                sameAsSnapshot.insert(item.id)
                continue
            }
            let secret = try decryptSecret(item)
            if let held, let openSnapshotSecret, Self.sameAttributes(held, item), try openSnapshotSecret(held) == secret {
                sameAsSnapshot.insert(item.id)
                continue
            }
            entries[item.id] = MergeEntry(version: MergeVersion(id: item.id, attributes: item.attributes.detached(), secret: secret))
        }
        for item in snapshot.itemsInAddedOrder() where index[item.id] == nil { missing.append(item.id) }
        for (id, time) in tombstones { entries[id, default: MergeEntry()].tombstone = time }
    }

    /// Whether two stored items are one version: the same id, attribute bytes and sealed secret box. A box that opened
    /// under each copy's keys with the same bytes holds the same secret (both copies were opened with a credential of
    /// this keychain, and a box's nonce and tag bind it to its key).
    static func storedAlike(_ left: StoredItem, _ right: StoredItem) -> Bool {
        sameAttributes(left, right) && left.secret.box == right.secret.box
    }

    /// Whether two stored items have the same id, class and attribute bytes: with the same secret, one version.
    static func sameAttributes(_ left: StoredItem, _ right: StoredItem) -> Bool {
        left.id == right.id && left.attributes.itemClass == right.attributes.itemClass && left.attributes.encoded == right.attributes.encoded
    }
}
