// Searching the live items: by class and predicate, by query, and the generic-password fast path.
extension ItemIndex {
    /// The live items of a class whose attributes match, in the order they were first added.
    func items(of itemClass: ItemClass, where predicate: (ItemAttributes) -> Bool) -> [StoredItem] {
        storage.filter { $0.attributes.itemClass == itemClass && predicate($0.attributes) }.sorted { $0.order < $1.order }
    }

    /// The live items a (non-identity) query matches, in the order they were first added.
    ///
    /// - Throws: `KeychainError.invalidParameter` for a query that is not valid.
    func matching(_ query: Query) throws(KeychainError) -> [StoredItem] {
        var items: [StoredItem] = []
        try forEachMatch(of: query) { (item) throws(KeychainError) in
            items.append(item)
            return true
        }
        return items
    }

    /// Calls `body` with each live item a (non-identity) query matches, in the order the items were first
    /// added, until `body` returns false.
    ///
    /// Lends each item in place rather than copying it, and a query answered by one index candidate
    /// allocates nothing here: the typed `find` builds its results straight from the items.
    ///
    /// - Throws: `KeychainError.invalidParameter` for a query that is not valid; whatever `body` throws.
    func forEachMatch(of query: Query, _ body: (StoredItem) throws(KeychainError) -> Bool) throws(KeychainError) {
        try query.validate()
        guard let itemClass = query.itemClass.itemClass else { return }
        let matcher = Query.Matcher(query)
        if let reference = query.persistentReference {
            if let position = position(of: reference.itemID), matches(position, itemClass, matcher) { _ = try body(storage[position]) }
            return
        }
        try forEachMatch(of: matcher, itemClass, body)
    }

    /// The live items of `itemClass` a query matches, in the order they were first added; the query is not
    /// validated (the caller built it) and its persistent reference is not consulted.
    func items(matching query: Query, of itemClass: ItemClass) -> [StoredItem] {
        var items: [StoredItem] = []
        forEachMatch(of: Query.Matcher(query), itemClass) { item in
            items.append(item)
            return true
        }
        return items
    }

    /// Whether the item at `position` is of `itemClass` and `matcher` accepts it.
    private func matches(_ position: Int, _ itemClass: ItemClass, _ matcher: Query.Matcher) -> Bool {
        storage[position].attributes.itemClass == itemClass && matcher.matches(storage[position].attributes)
    }

    /// The matches of `matcher` among the live items of `itemClass`: from a secondary index when the query
    /// gives the attributes of one, by scanning the items otherwise; in the order they were first added.
    private func forEachMatch<Failure: Error>(
        of matcher: Query.Matcher, _ itemClass: ItemClass, _ body: (StoredItem) throws(Failure) -> Bool
    ) throws(Failure) {
        var found: [Int] = []
        switch lookup.candidates(itemClass: itemClass, value: matcher.wantedValue) {
        case .none: return
        case .one(let position):
            if matches(position, itemClass, matcher) { _ = try body(storage[position]) }
            return
        case .many(let positions):
            found.reserveCapacity(positions.count)
            for position in positions where matches(Int(position), itemClass, matcher) { found.append(Int(position)) }
        case .unindexed:
            for position in 0..<storage.count where matches(position, itemClass, matcher) { found.append(position) }
        }
        if found.count > 1 { found.sort { storage[$0].order < storage[$1].order } }
        for position in found {
            guard try body(storage[position]) else { return }
        }
    }

    /// The position of the first-added live generic password with exactly this service and account that is
    /// not synchronizable: what `Query.genericPassword(service:account:)` with limit one finds, without
    /// building and validating a query (``Keychain/data(forService:account:)``, the most common read, uses
    /// it).
    func firstGenericPassword(service: String, account: String) -> Int? {
        let wantedService = StoredAttributeValue.string(service)
        let wantedAccount = StoredAttributeValue.string(account)
        var first: (position: Int, order: UInt64)? = nil
        func consider(_ position: Int) {
            let attributes = storage[position].attributes
            guard attributes.itemClass == .genericPassword,
                  attributes.boolean(.synchronizable) != true,
                  attributes.value(Attribute.service.tag, equals: wantedService) ?? service.isEmpty,
                  attributes.value(Attribute.account.tag, equals: wantedAccount) ?? account.isEmpty else { return }
            let order = storage[position].order
            if let current = first, current.order < order { return }
            first = (position, order)
        }
        let candidates = lookup.candidates(itemClass: .genericPassword) { attribute in
            attribute == .service ? wantedService : attribute == .account ? wantedAccount : nil
        }
        switch candidates {
        case .unindexed:
            for position in 0..<storage.count { consider(position) }
        case .none: break
        case .one(let position): consider(position)
        case .many(let positions): for position in positions { consider(Int(position)) }
        }
        return first?.position
    }
}
