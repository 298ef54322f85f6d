/// A live item as the keychain holds it in memory: decrypted attributes, the still-sealed secret.
struct StoredItem: Sendable {
    let id: ItemID
    var attributes: ItemAttributes
    var secret: SealedSecret
    /// When the item was first added, counted in records; orders search results deterministically.
    let order: UInt64
}

/// Why a record cannot be applied: it breaks uniqueness, or deletes an item that is not there.
enum IndexConflict: Error, Equatable {
    case duplicatePrimaryKey(ItemID)
    case unknownItem(ItemID)
    /// A put for a live item id with a different class (SPEC.md §8.3: an item keeps its class).
    case classChange(ItemID)
}

/// The live items of a keychain, with the primary-key map that enforces uniqueness (SPEC.md §8.3).
///
/// The items sit densely in pages (``PagedItems``), in no particular order, with a map from id to position:
/// a dictionary of whole items would keep a slot of an item's size for every bucket (up to 2.6 per item at
/// the load factors a large dictionary runs at), this keeps one of 20 bytes. Removing an item moves the last
/// one into its place.
struct ItemIndex: Sendable {
    private var storage = PagedItems()
    /// Each live item's position in `storage`.
    private var positions: [ItemID: Int32] = [:]
    private var primaryKeys = PrimaryKeyMap()
    private var lookup = LookupIndex()
    /// The order the next new item gets.
    var nextOrder: UInt64 = 0
    /// The file bytes of the puts that wrote the live items (SealedSecret.entryByteCount, summed).
    private(set) var liveEntryBytes: Int = 0

    var count: Int { storage.count }

    subscript(id: ItemID) -> StoredItem? {
        guard let position = positions[id] else { return nil }
        return storage[Int(position)]
    }

    /// The live items, in the order they were first added.
    func itemsInAddedOrder() -> [StoredItem] {
        storage.filter { _ in true }.sorted { $0.order < $1.order }
    }

    /// The live items by id (for tests and diagnostics; builds a dictionary).
    var itemsByID: [ItemID: StoredItem] {
        Dictionary(uniqueKeysWithValues: storage.filter { _ in true }.map { ($0.id, $0) })
    }

    /// The live item with this primary key, if any.
    func itemID(for primaryKey: PrimaryKey) -> ItemID? { primaryKeys.holder(of: primaryKey) { self[$0] } }

    /// Makes room for `count` more items.
    private mutating func reserveCapacity(forMoreItems count: Int) {
        storage.reserveCapacity(storage.count + count)  // the page list; pages are made as they fill
        positions.reserveCapacity(positions.count + count)
        primaryKeys.reserveCapacity(forMoreItems: count)
        lookup.reserveCapacity(forMoreItems: count)
    }

    /// Stores `item`, replacing the live item with its id if there is one.
    private mutating func store(_ item: StoredItem) {
        if let position = positions[item.id] {
            storage[Int(position)] = item
        } else {
            // Every live item has two boxes in the file's epoch, and an epoch seals at most 2³¹ boxes (SPEC.md §10).
            positions[item.id] = Int32(truncatingIfNeeded: storage.count)
            storage.append(item)
        }
    }

    /// Takes the live item `id` out, moving the last item into its place; `nil` when it is not live.
    private mutating func take(_ id: ItemID) -> StoredItem? {
        guard let position = positions.removeValue(forKey: id).map(Int.init) else { return nil }
        let last = storage.removeLast()
        guard position < storage.count else { return last }
        let removed = storage[position]
        storage[position] = last
        positions[last.id] = Int32(truncatingIfNeeded: position)
        return removed
    }

    /// Changes the live item `id` in place.
    private mutating func modify(_ id: ItemID, _ change: (inout StoredItem) -> Void) {
        guard let position = positions[id] else { return }
        change(&storage[Int(position)])
    }

    /// Checks that the entries can be applied, in order, as one record: every deletion names an item that is
    /// live at that point, and after the whole record no two items share a primary key.
    func validate(_ entries: [DecodedEntry]) throws(IndexConflict) {
        _ = try plan(entries)
    }

    /// Applies a record's entries, all or nothing.
    mutating func apply(_ entries: [DecodedEntry]) throws(IndexConflict) {
        if entries.count > 1, applyNewItems(entries) { return }
        let changes = try plan(entries)
        if changes.written.count > 16 {
            reserveCapacity(forMoreItems: changes.written.count)
        }
        for id in changes.removed {
            if let old = take(id) {
                liveEntryBytes -= old.secret.entryByteCount
                lookup.remove(id, old.attributes)
                removePrimaryKey(of: old)
            }
        }
        // In the order the entries name the items, so that new items are numbered deterministically.
        for id in changes.written {
            guard let change = changes.finalState[id] else { continue }
            let old = self[id]
            if let old {
                liveEntryBytes -= old.secret.entryByteCount
                lookup.remove(id, old.attributes)
                removePrimaryKey(of: old)
            }
            lookup.insert(id, change.attributes)
            liveEntryBytes += change.secret.entryByteCount
            let order = old?.order ?? { defer { nextOrder += 1 }; return nextOrder }()
            store(StoredItem(id: id, attributes: change.attributes, secret: change.secret, order: order))
        }
        for (id, key) in changes.keys {
            primaryKeys.insert(key, holder: id)
        }
    }

    /// Adds an item that is not live under an id no live item has and a primary key no live item has: what
    /// ``apply(_:)`` does for such a single put, without planning it. The caller checked both conditions.
    mutating func insertNew(_ id: ItemID, attributes: ItemAttributes, secret: SealedSecret, primaryKey: PrimaryKey) {
        assert(self[id] == nil && itemID(for: primaryKey) == nil)
        lookup.insert(id, attributes)
        liveEntryBytes += secret.entryByteCount
        store(StoredItem(id: id, attributes: attributes, secret: secret, order: nextOrder))
        nextOrder += 1
        primaryKeys.insert(primaryKey, holder: id)
    }

    /// Applies a record made only of puts of new items — what a bulk load, a compaction and every file
    /// rewrite write — without planning it: each item goes straight in, as ``insertNew(_:attributes:secret:primaryKey:)``.
    /// The first put that is not that simple (an id already live or repeated, a primary key already held)
    /// undoes the puts before it and returns false, leaving the record to the planned path, which accepts
    /// or rejects it exactly as before. The result is the one the planned path gives: the same items, in the
    /// same order, with the same keys.
    private mutating func applyNewItems(_ entries: [DecodedEntry]) -> Bool {
        for entry in entries {
            guard case .put = entry else { return false }
        }
        // Room is made only for large records: a small one that falls back (an update, say) must not make a
        // large index rehash.
        if entries.count > 16, case .put(let firstID, _, _) = entries[0], self[firstID] == nil {
            reserveCapacity(forMoreItems: entries.count)
        }
        var inserted = 0
        for entry in entries {
            guard case .put(let id, let attributes, let secret) = entry else { return false }
            let key = attributes.primaryKey
            guard positions[id] == nil, itemID(for: key) == nil else {
                undoNewItems(entries.prefix(inserted))
                return false
            }
            insertNew(id, attributes: attributes, secret: secret, primaryKey: key)
            inserted += 1
        }
        return true
    }

    /// Takes out the items `applyNewItems` put in, newest first, and gives their order numbers back.
    private mutating func undoNewItems(_ entries: ArraySlice<DecodedEntry>) {
        for entry in entries.reversed() {
            guard case .put(let id, let attributes, _) = entry, let item = take(id) else { continue }
            liveEntryBytes -= item.secret.entryByteCount
            lookup.remove(id, attributes)
            primaryKeys.remove(attributes.primaryKey, holder: id)
            nextOrder -= 1
        }
    }

    /// Removes the primary-key entry of `item` if it is still the item's.
    private mutating func removePrimaryKey(of item: StoredItem) {
        let key = item.attributes.primaryKey
        primaryKeys.remove(key, holder: item.id)
    }

    /// Gives a live item the sealed secret its record was written with (a batch stages its puts with a
    /// placeholder until the record is sealed).
    mutating func replaceSecret(of id: ItemID, with secret: SealedSecret) {
        guard let old = self[id]?.secret.entryByteCount else { return }
        liveEntryBytes += secret.entryByteCount - old
        modify(id) { $0.secret = secret }
    }

    /// Puts back the item `id` as it was (`nil`: absent), whatever it is now: how a batch that fails undoes
    /// what it staged.
    mutating func restore(_ id: ItemID, to original: StoredItem?) {
        if let current = take(id) {
            liveEntryBytes -= current.secret.entryByteCount
            lookup.remove(id, current.attributes)
            removePrimaryKey(of: current)
        }
        guard let original else { return }
        store(original)
        liveEntryBytes += original.secret.entryByteCount
        lookup.insert(id, original.attributes)
        primaryKeys.insert(original.attributes.primaryKey, holder: id)
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
                let liveBefore = positions[id] != nil && !plan.removed.contains(id)
                guard liveInRecord || liveBefore else { throw .unknownItem(id) }
                plan.finalState.removeValue(forKey: id)
                if positions[id] != nil { plan.removed.insert(id) }
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

    /// The live items of a class whose attributes match, in the order they were first added.
    func items(of itemClass: ItemClass, where predicate: (ItemAttributes) -> Bool) -> [StoredItem] {
        storage.filter { $0.attributes.itemClass == itemClass && predicate($0.attributes) }.sorted { $0.order < $1.order }
    }

    /// The live items a (non-identity) query matches, in the order they were first added.
    ///
    /// - Throws: `KeychainError.invalidParameter` for a query that is not valid.
    func matching(_ query: Query) throws(KeychainError) -> [StoredItem] {
        try query.validate()
        guard let itemClass = query.itemClass.itemClass else { return [] }
        if let reference = query.persistentReference {
            guard let item = self[reference.itemID], item.attributes.itemClass == itemClass,
                  query.matches(item.attributes) else { return [] }
            return [item]
        }
        return items(matching: query, of: itemClass)
    }

    /// The first-added live generic password with exactly this service and account that is not
    /// synchronizable: what `Query.genericPassword(service:account:)` with limit one finds, without building
    /// and validating a query (``Keychain/data(forService:account:)``, the most common read, uses it).
    func firstGenericPassword(service: String, account: String) -> StoredItem? {
        let wantedService = StoredAttributeValue.string(service)
        let wantedAccount = StoredAttributeValue.string(account)
        var first: StoredItem? = nil
        func consider(_ id: ItemID) {
            guard let item = self[id], item.attributes.itemClass == .genericPassword,
                  item.attributes.boolean(.synchronizable) != true,
                  item.attributes.value(Attribute.service.tag, equals: wantedService) ?? service.isEmpty,
                  item.attributes.value(Attribute.account.tag, equals: wantedAccount) ?? account.isEmpty else { return }
            if let current = first, current.order < item.order { return }
            first = item
        }
        let candidates = lookup.candidates(itemClass: .genericPassword) { attribute in
            attribute == .service ? wantedService : attribute == .account ? wantedAccount : nil
        }
        switch candidates {
        case .unindexed:
            for item in items(of: .genericPassword, where: { _ in true }) { consider(item.id) }
        case .none: break
        case .one(let id): consider(id)
        case .many(let ids): for id in ids { consider(id) }
        }
        return first
    }

    /// The live items a query matches, in the order they were first added: from a secondary index when
    /// the query gives the attributes of one, by scanning the items otherwise.
    func items(matching query: Query, of itemClass: ItemClass) -> [StoredItem] {
        let matcher = Query.Matcher(query)
        var matches: [StoredItem] = []
        func consider(_ id: ItemID) {
            if let item = self[id], item.attributes.itemClass == itemClass, matcher.matches(item.attributes) {
                matches.append(item)
            }
        }
        switch lookup.candidates(for: query, itemClass: itemClass) {
        case .unindexed: return items(of: itemClass) { matcher.matches($0) }
        case .none: return []
        case .one(let id): consider(id)
        case .many(let ids):
            matches.reserveCapacity(ids.count)
            for id in ids { consider(id) }
            if matches.count > 1 { matches.sort { $0.order < $1.order } }
        }
        return matches
    }
}
