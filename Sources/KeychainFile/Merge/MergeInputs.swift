/// The entries a merge settles (SPEC.md §43), read only where they can matter: an item every copy stores alike and
/// that no rule reaches (no tombstone, no conflict copy of it or marker on it, no primary key another version takes)
/// is the same before and after, so it is neither decrypted nor compared. The ids read start with what differs and
/// grow until the merge's result reaches no other: the result is the one the rules give over every id.
struct MergeInputs {
    /// This keychain's entries, for the ids read.
    private(set) var ours: [ItemID: MergeEntry] = [:]
    /// The other copy's entries, for the ids read.
    private(set) var theirs: [ItemID: MergeEntry] = [:]
    /// The base's entries, for the ids read; nil without a base.
    private(set) var base: [ItemID: MergeEntry]?
    /// Whether the base is the last commit the copies' logs both hold (SPEC.md §43.9) rather than one given.
    private let sharedHistory: Bool
    private let index: ItemIndex
    private let tombstones: [ItemID: Int64]
    private let theirSide: MergeSide
    private let baseSide: MergeSide?
    private var read: Set<ItemID> = []
    private var pending: [ItemID] = []

    /// - Parameters:
    ///   - ours: This keychain's items, as the two sides were read against.
    ///   - tombstones: This keychain's tombstones.
    ///   - theirs: The other copy, read against `ours`.
    ///   - base: The base, read against `ours`, when there is one.
    ///   - sharedHistory: `base` was found in the copies' logs (SPEC.md §43.9).
    init(ours index: ItemIndex, tombstones: [ItemID: Int64], theirs: MergeSide, base: MergeSide?, sharedHistory: Bool = false) {
        self.index = index
        self.sharedHistory = sharedHistory
        self.tombstones = tombstones
        theirSide = theirs
        baseSide = base
        self.base = base == nil ? nil : [:]
        // What differs, every tombstone, and every conflict copy with the item it names.
        for id in theirs.entries.keys { note(id) }
        for id in theirs.missing { note(id) }
        for id in tombstones.keys { note(id) }
        if let base { for id in base.tombstones.keys { note(id) } }
        for item in index.itemsInAddedOrder() {
            guard let origin = ConflictCopy.markedOrigin(item.attributes) else { continue }
            note(item.id)
            note(origin)
        }
    }

    /// The merge of the entries read, reading more until the result reaches no id left unread.
    ///
    /// - Parameter decryptSecret: Opens a secret of this keychain.
    mutating func merge(decryptSecret: (StoredItem) throws(KeychainError) -> [UInt8]) throws(KeychainError) -> CopyMerger.Outcome {
        while true {
            for id in pending { try load(id, decryptSecret: decryptSecret) }
            pending = []
            let outcome = try CopyMerger.merge(ours: ours, theirs: theirs, base: base, sharedHistory: sharedHistory)
            for (id, entry) in outcome.result {
                // A conflict copy the rules made at an id this keychain (or the base) holds.
                if index[id] != nil || baseSide?.entries[id] != nil { note(id) }
                guard let version = entry.version else { continue }
                // A version whose primary key an item not read holds (§43.5), or a conflict copy of an item not read (§43.4).
                if let holder = index.itemID(for: version.attributes.primaryKey) { note(holder) }
                if let origin = ConflictCopy.markedOrigin(version.attributes) { note(origin) }
            }
            if pending.isEmpty { return outcome }
        }
    }

    private mutating func note(_ id: ItemID) {
        if read.insert(id).inserted { pending.append(id) }
    }

    /// Reads the three entries of `id`, each only where its copy holds something there.
    private mutating func load(_ id: ItemID, decryptSecret: (StoredItem) throws(KeychainError) -> [UInt8]) throws(KeychainError) {
        var mine: MergeVersion? = nil
        if let item = index[id] {
            mine = MergeVersion(id: id, attributes: item.attributes.detached(), secret: try decryptSecret(item))
        }
        if mine != nil || tombstones[id] != nil { ours[id] = MergeEntry(version: mine, tombstone: tombstones[id]) }
        if let entry = Self.entry(id, of: theirSide, snapshotVersion: mine) { theirs[id] = entry }
        if let baseSide, let entry = Self.entry(id, of: baseSide, snapshotVersion: mine) { base?[id] = entry }
    }

    /// A side's entry for `id`, nil when it holds nothing there.
    private static func entry(_ id: ItemID, of side: MergeSide, snapshotVersion: MergeVersion?) -> MergeEntry? {
        if side.sameAsSnapshot.contains(id) { return MergeEntry(version: snapshotVersion, tombstone: side.tombstones[id]) }
        return side.entries[id]
    }
}
