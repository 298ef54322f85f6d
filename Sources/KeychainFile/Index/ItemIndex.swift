/// The live items of a keychain, with the primary-key map that enforces uniqueness (SPEC.md §8.3).
///
/// The items sit densely in pages (``PagedItems``), in no particular order. Three ``DigestTable``s map to
/// their positions there: item ids, lookup digests (``LookupIndex``) and primary-key digests
/// (``PrimaryKeyMap``); every position found through a digest is confirmed against the item itself. A
/// dictionary of whole items would keep a slot of an item's size for every bucket (up to 2.6 per item at the
/// load factors a large dictionary runs at); these keep 8 bytes per slot. Removing an item moves the last
/// one into its place, and the tables follow it.
struct ItemIndex: Sendable {
    private(set) var storage = PagedItems()
    /// Each live item's position in `storage`, by the digest of its id.
    private var positions = DigestTable()
    private var primaryKeys = PrimaryKeyMap()
    private(set) var lookup = LookupIndex()
    /// The order the next new item gets.
    var nextOrder: UInt64 = 0
    /// The file bytes of the puts that wrote the live items (SealedSecret.entryByteCount, summed).
    private(set) var liveEntryBytes: Int = 0

    var count: Int { storage.count }

    subscript(id: ItemID) -> StoredItem? {
        position(of: id).map { storage[$0] }
    }

    /// The live items, in the order they were first added.
    func itemsInAddedOrder() -> [StoredItem] {
        storage.filter { _ in true }.sorted { $0.order < $1.order }
    }

    /// The positions of the live items (see ``item(atPosition:)``), in the order the items were first added:
    /// 4 bytes per item (16 while sorting), where ``itemsInAddedOrder()`` copies every item.
    func positionsInAddedOrder() -> [Int32] {
        guard storage.count > 0 else { return [] }
        // Positions stay below 2³¹ (DigestTable.maximumPosition).
        var lowest = UInt64.max
        var highest = UInt64.min
        for position in 0..<storage.count {
            lowest = min(lowest, storage[position].order)
            highest = max(highest, storage[position].order)
        }
        // Order numbers are distinct, and only adds use them up: unless most items ever added are gone, each
        // position goes straight to its order's place (4 bytes for each order number in the range), rather than
        // sorting pairs of order and position (16 bytes an item, and a merge buffer of half as much again).
        let span = highest - lowest
        guard span < UInt64(4 * storage.count) else {
            var ranked = (0..<storage.count).map { (order: storage[$0].order, position: Int32(truncatingIfNeeded: $0)) }
            ranked.sort { $0.order < $1.order }
            return ranked.map(\.position)
        }
        var byOrder = [Int32](repeating: -1, count: Int(span) + 1)
        for position in 0..<storage.count {
            byOrder[Int(storage[position].order - lowest)] = Int32(truncatingIfNeeded: position)
        }
        byOrder.removeAll { $0 < 0 }
        return byOrder
    }

    /// The live item at `position` (0 ..< count); positions change when items are added or removed.
    func item(atPosition position: Int) -> StoredItem {
        storage[position]
    }

    /// Gives the live item at `position` the sealed secret it was rewritten with.
    mutating func replaceSecret(atPosition position: Int, with secret: SealedSecret) {
        liveEntryBytes += secret.entryByteCount - storage[position].entryByteCount
        storage[position] = storage[position].replacingSecret(with: secret)
    }

    /// The live items by id (for tests and diagnostics; builds a dictionary).
    var itemsByID: [ItemID: StoredItem] {
        Dictionary(uniqueKeysWithValues: storage.filter { _ in true }.map { ($0.id, $0) })
    }

    /// The live item with this primary key, if any.
    func itemID(for primaryKey: PrimaryKey) -> ItemID? {
        primaryKeys.holder(of: primaryKey) { storage[$0] }.map { storage[$0].id }
    }

    /// The digest the id table keys `id` by.
    static func digest(_ id: ItemID) -> Int {
        var hasher = Hasher()
        hasher.combine(id)
        return hasher.finalize()
    }

    /// Where the live item `id` sits in `storage`.
    func position(of id: ItemID) -> Int? {
        position(of: id, digest: Self.digest(id))
    }

    /// As ``position(of:)``, with the id's digest given.
    private func position(of id: ItemID, digest: Int) -> Int? {
        var found: Int? = nil
        positions.forEachPosition(digest) { position in
            if storage[position].id == id { found = position }
            return found == nil
        }
        return found
    }

    /// Makes room for `count` more items.
    private mutating func reserveCapacity(forMoreItems count: Int) {
        storage.reserveCapacity(storage.count + count)  // the page list; pages are made as they fill
        positions.reserveCapacity(forMore: count)
        primaryKeys.reserveCapacity(forMoreItems: count)
        lookup.reserveCapacity(forMoreItems: count)
    }

    /// Adds `item`, whose id is not live, with its primary key `key`; returns its position.
    @discardableResult
    private mutating func insertItem(_ item: StoredItem, primaryKey key: PrimaryKey) -> Int {
        let digests = ItemDigests(id: item.id, attributes: item.attributes, primaryKey: key)
        return insertItem(item, digests: digests, primaryKeyDigest: primaryKeys.digest(of: digests, attributes: item.attributes))
    }

    /// As ``insertItem(_:primaryKey:)``, with the item's digests and its primary key's digest in
    /// `primaryKeys` (``PrimaryKeyMap/digest(of:attributes:)``) computed already.
    @discardableResult
    private mutating func insertItem(_ item: consuming StoredItem, digests: ItemDigests, primaryKeyDigest: Int) -> Int {
        let position = storage.count
        liveEntryBytes += item.entryByteCount
        storage.append(item)
        positions.insert(digests.id, position)
        lookup.insert(position, digests.lookup)
        primaryKeys.insert(digest: primaryKeyDigest, holder: position)
        return position
    }

    /// Replaces the live item at `position` with `item` (same id), re-entering its lookup digests and
    /// primary key.
    private mutating func replaceItem(at position: Int, with item: StoredItem, primaryKey key: PrimaryKey) {
        let old = storage[position]
        lookup.remove(position, old.attributes)
        primaryKeys.remove(old.attributes.primaryKey, holder: position)
        liveEntryBytes += item.entryByteCount - old.entryByteCount
        storage[position] = item
        lookup.insert(position, item.attributes)
        primaryKeys.insert(key, holder: position)
    }

    /// Takes the live item `id` out of the pages and every table, moving the last item into its place;
    /// `nil` when it is not live.
    @discardableResult
    private mutating func removeItem(_ id: ItemID) -> StoredItem? {
        guard let position = position(of: id) else { return nil }
        let removed = storage[position]
        // The removed item leaves the tables before another item takes its position.
        positions.remove(Self.digest(id), position)
        lookup.remove(position, removed.attributes)
        primaryKeys.remove(removed.attributes.primaryKey, holder: position)
        liveEntryBytes -= removed.entryByteCount
        let last = storage.removeLast()
        let lastPosition = storage.count
        if position < lastPosition {
            storage[position] = last
            positions.move(Self.digest(last.id), from: lastPosition, to: position)
            lookup.move(last.attributes, from: lastPosition, to: position)
            primaryKeys.move(last.attributes.primaryKey, from: lastPosition, to: position)
        }
        return removed
    }

    /// Checks that the entries can be applied, in order, as one record: every deletion names an item that is
    /// live at that point, and after the whole record no two items share a primary key.
    func validate(_ entries: [DecodedEntry]) throws(IndexConflict) {
        _ = try plan(entries)
    }

    /// Applies a record's entries, all or nothing.
    mutating func apply(_ entries: [DecodedEntry]) throws(IndexConflict) {
        if entries.count > 1, applyNewItems(entries) { return }
        try applyPlanned(entries)
    }

    /// ``apply(_:)`` through the plan: every change checked before the first is made.
    private mutating func applyPlanned(_ entries: [DecodedEntry]) throws(IndexConflict) {
        let changes = try plan(entries)
        if changes.written.count > 16 {
            reserveCapacity(forMoreItems: changes.written.count)
        }
        for id in changes.removed {
            removeItem(id)
        }
        // In the order the entries name the items, so that new items are numbered deterministically. The
        // plan checked uniqueness after the whole record; the primary-key map holds several positions per
        // digest, so an item may take a key another item of the record gives up later in the loop.
        for id in changes.written {
            guard let change = changes.finalState[id], let key = changes.keys[id] else { continue }
            if let position = position(of: id) {
                let order = storage[position].order
                replaceItem(
                    at: position, with: StoredItem(id: id, attributes: change.attributes, secret: change.secret, order: order),
                    primaryKey: key)
            } else {
                insertItem(StoredItem(id: id, attributes: change.attributes, secret: change.secret, order: nextOrder), primaryKey: key)
                nextOrder += 1
            }
        }
    }

    /// Adds an item that is not live under an id no live item has and a primary key no live item has: what
    /// ``apply(_:)`` does for such a single put, without planning it. The caller checked both conditions.
    mutating func insertNew(_ id: ItemID, attributes: ItemAttributes, secret: SealedSecret, primaryKey: PrimaryKey) {
        assert(self[id] == nil && itemID(for: primaryKey) == nil)
        insertItem(StoredItem(id: id, attributes: attributes, secret: secret, order: nextOrder), primaryKey: primaryKey)
        nextOrder += 1
    }

    /// Applies a record made only of puts of new items — what a bulk load, a compaction and every file
    /// rewrite write — without planning it: each item goes straight in, as ``insertNew(_:attributes:secret:primaryKey:)``.
    /// The first put that is not that simple (an id already live or repeated, a primary key already held)
    /// undoes the puts before it and returns false, leaving the record to the planned path, which accepts
    /// or rejects it exactly as before. The result is the one the planned path gives: the same items, in the
    /// same order, with the same keys.
    private mutating func applyNewItems(_ entries: [DecodedEntry]) -> Bool {
        reserveCapacity(forRecordOf: entries.count, startingWith: entries)
        return insertNewItems(entries)
    }

    /// Makes room for a record of `entryCount` entries whose first ones are `first`, if it is large and they
    /// are puts, the first of a new item. Room is made only for such records: one that falls back to the plan
    /// (an update of many items, say) must not make a large index rehash.
    private mutating func reserveCapacity(forRecordOf entryCount: Int, startingWith first: [DecodedEntry]) {
        guard entryCount > 16, case .put(let firstID, _, _)? = first.first, self[firstID] == nil else { return }
        for entry in first {
            guard case .put = entry else { return }
        }
        reserveCapacity(forMoreItems: entryCount)
    }

    /// Inserts `entries` if every one is a put of a new item under a free primary key, and returns true;
    /// otherwise takes out the ones it inserted and returns false. `digests`, when given, holds each put's
    /// ``ItemDigests`` at its entry's index, computed where the entries were decoded; they are computed here
    /// otherwise.
    private mutating func insertNewItems(_ entries: [DecodedEntry], digests: [ItemDigests?]? = nil) -> Bool {
        precondition(digests == nil || digests!.count == entries.count, "one digests slot per entry")
        var inserted = 0
        // By index, each entry read in place: `enumerated()` hands out copies, and a copy of a put retains and
        // releases its item's block twice.
        for index in entries.indices {
            guard case .put(let id, let attributes, let secret) = entries[index] else {
                _ = takeBackNewItems(inserted)
                return false
            }
            let item = digests?[index] ?? ItemDigests(id: id, attributes: attributes)
            let keyDigest = primaryKeys.digest(of: item, attributes: attributes)
            // The holder is looked for only when some key has the digest: the call's closure reads `storage`
            // while `primaryKeys` is being read, which makes the compiler copy the map for it.
            guard position(of: id, digest: item.id) == nil,
                !primaryKeys.hasCandidates(digest: keyDigest)
                    || primaryKeys.holder(ofKeyOf: attributes, digest: keyDigest, among: { storage[$0] }) == nil
            else {
                _ = takeBackNewItems(inserted)
                return false
            }
            insertItem(StoredItem(id: id, attributes: attributes, secret: secret, order: nextOrder), digests: item, primaryKeyDigest: keyDigest)
            nextOrder += 1
            inserted += 1
        }
        return true
    }

    /// Takes out the last `count` items, which ``insertNewItems(_:)`` put in (newest first, so that none moves
    /// another), gives their order numbers back, and returns their puts in the order they were inserted.
    private mutating func takeBackNewItems(_ count: Int) -> [DecodedEntry] {
        guard count > 0 else { return [] }
        let puts: [DecodedEntry] = (storage.count - count..<storage.count).map { position in
            let item = storage[position]
            return .put(id: item.id, attributes: item.attributes, secret: item.secret)
        }
        for _ in 0..<count {
            removeItem(storage[storage.count - 1].id)
            nextOrder -= 1
        }
        return puts
    }

    // MARK: Applying a record as it is decoded

    /// A record being applied piece by piece as it is decoded: ``applyPiece(_:ofRecordOf:to:)``, then
    /// ``finishApplying(_:)`` or, if the record fails, ``abandonApplying(_:)``.
    struct PiecewiseApplication {
        /// How many entries, from the record's first, went straight in as new items: the index's last items.
        fileprivate var inserted = 0
        /// The record's entries so far, once a piece was not only puts of new items.
        fileprivate var kept: [DecodedEntry]? = nil
    }

    /// Applies the next piece of a record of `entryCount` entries. While every entry is a put of a new item
    /// under a free primary key (a bulk load, a compaction: the common large record), the items go straight
    /// in, so that the record's entries are never all held at once; at the first piece that is not, the items
    /// put in so far are taken back out as entries, and the record is kept to be applied whole, planned, by
    /// ``finishApplying(_:)``. Either way the outcome is ``apply(_:)``'s for the whole record.
    /// `digests`, when given, holds the ``ItemDigests`` of each put of the piece at its entry's index.
    mutating func applyPiece(
        _ piece: [DecodedEntry], digests: [ItemDigests?]? = nil, ofRecordOf entryCount: Int, to application: inout PiecewiseApplication
    ) {
        if application.kept == nil {
            if application.inserted == 0 { reserveCapacity(forRecordOf: entryCount, startingWith: piece) }
            if insertNewItems(piece, digests: digests) {
                application.inserted += piece.count
                return
            }
            application.kept = takeBackNewItems(application.inserted)
            application.inserted = 0
        }
        application.kept?.append(contentsOf: piece)
    }

    /// Finishes applying a record whose pieces were all given: all or nothing, with ``apply(_:)``'s errors. After
    /// this returns, the record is applied and `application` is spent.
    mutating func finishApplying(_ application: inout PiecewiseApplication) throws(IndexConflict) {
        if let kept = application.kept { try applyPlanned(kept) }
        application = PiecewiseApplication()
    }

    /// Takes out what the pieces of a record that failed put in: the index is as it was before the record.
    mutating func abandonApplying(_ application: inout PiecewiseApplication) {
        _ = takeBackNewItems(application.inserted)
        application = PiecewiseApplication()
    }

    /// Gives a live item the sealed secret its record was written with (a batch stages its puts with a
    /// placeholder until the record is sealed).
    mutating func replaceSecret(of id: ItemID, with secret: SealedSecret) {
        guard let position = position(of: id) else { return }
        liveEntryBytes += secret.entryByteCount - storage[position].entryByteCount
        storage[position] = storage[position].replacingSecret(with: secret)
    }

    /// Puts back the item `id` as it was (`nil`: absent), whatever it is now: how a batch that fails undoes
    /// what it staged.
    mutating func restore(_ id: ItemID, to original: StoredItem?) {
        removeItem(id)
        guard let original else { return }
        insertItem(original, primaryKey: original.attributes.primaryKey)
    }

    private struct Plan {
        var finalState: [ItemID: (attributes: ItemAttributes, secret: SealedSecret)] = [:]
        var removed: Set<ItemID> = []
        /// Every item id a put names, in entry order, each once.
        var written: [ItemID] = []
        var writtenSet: Set<ItemID> = []
        /// The primary key of every item in `finalState`, computed once.
        var keys: [ItemID: PrimaryKey] = [:]
    }

    /// The net effect of the entries, checked (see `validate`).
    private func plan(_ entries: [DecodedEntry]) throws(IndexConflict) -> Plan {
        var plan = Plan()
        plan.finalState.reserveCapacity(entries.count)
        plan.written.reserveCapacity(entries.count)
        plan.writtenSet.reserveCapacity(entries.count)
        for entry in entries {
            switch entry {
            case .put(let id, let attributes, let secret):
                let current = plan.finalState[id]?.attributes.itemClass
                    ?? (plan.removed.contains(id) ? nil : self[id]?.attributes.itemClass)
                if let current, current != attributes.itemClass { throw .classChange(id) }
                if plan.writtenSet.insert(id).inserted { plan.written.append(id) }
                plan.finalState[id] = (attributes, secret)
                plan.removed.remove(id)
            case .delete(let id):
                let liveInRecord = plan.finalState[id] != nil
                let liveBefore = position(of: id) != nil && !plan.removed.contains(id)
                guard liveInRecord || liveBefore else { throw .unknownItem(id) }
                plan.finalState.removeValue(forKey: id)
                if position(of: id) != nil { plan.removed.insert(id) }
            }
        }
        // Uniqueness after the record: a new key may not belong to an item the record leaves untouched, nor
        // to another item the record writes.
        var claimed: [PrimaryKey: ItemID] = [:]
        claimed.reserveCapacity(plan.finalState.count)
        plan.keys.reserveCapacity(plan.finalState.count)
        for (id, state) in plan.finalState {
            let key = state.attributes.primaryKey
            plan.keys[id] = key
            if let other = claimed[key], other != id { throw .duplicatePrimaryKey(id) }
            claimed[key] = id
            if let holder = itemID(for: key), holder != id, plan.finalState[holder] == nil, !plan.removed.contains(holder) {
                throw .duplicatePrimaryKey(id)
            }
        }
        return plan
    }
}
