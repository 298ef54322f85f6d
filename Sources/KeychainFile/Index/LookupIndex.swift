/// Secondary indexes over primary-key attributes, so that the common searches — a password by service and
/// account, an internet password by server, a private key by application label — do not scan every item.
///
/// Each index maps the canonical encoding of some primary-key attributes (which every item stores, SPEC.md
/// §8.2) to the items with those values. A query that gives all the attributes of an index is answered
/// from it; the query's other conditions are then checked item by item.
struct LookupIndex: Sendable {
    struct Key: Hashable, Sendable {
        let definition: UInt8
        let encoded: [UInt8]

        func hash(into hasher: inout Hasher) {
            encoded.withUnsafeBytes { hasher.combine(bytes: $0) }
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.definition == rhs.definition && lhs.encoded.elementsEqualBytes(rhs.encoded)
        }
    }

    /// The items with one key: most keys (service and account, say) name one item, which is kept without
    /// allocating a set.
    enum Bucket: Sendable {
        case one(ItemID)
        case many(Set<ItemID>)

        var ids: [ItemID] {
            switch self {
            case .one(let id): return [id]
            case .many(let ids): return Array(ids)
            }
        }

        mutating func insert(_ id: ItemID) {
            switch self {
            case .one(let existing):
                if existing != id { self = .many([existing, id]) }
            case .many(var ids):
                // Drop this enum's reference first, so that the set is unique and changes in place.
                self = .one(id)
                ids.insert(id)
                self = .many(ids)
            }
        }

        /// Removes `id`; returns false if the bucket is then empty.
        mutating func remove(_ id: ItemID) -> Bool {
            switch self {
            case .one(let existing):
                return existing != id
            case .many(var ids):
                self = .one(id)
                ids.remove(id)
                if ids.count == 1, let last = ids.first {
                    self = .one(last)
                } else {
                    self = .many(ids)
                }
                return !ids.isEmpty
            }
        }
    }

    /// The indexed attribute sets per class, most specific first.
    static let definitions: [ItemClass: [[Attribute]]] = [
        .genericPassword: [[.service, .account], [.service]],
        .internetPassword: [[.server, .account], [.server]],
        .certificate: [[.issuer, .serialNumber]],
        .key: [[.applicationLabel]],
    ]

    private var buckets: [Key: Bucket] = [:]

    mutating func insert(_ id: ItemID, _ attributes: ItemAttributes) {
        for key in Self.keys(of: attributes) {
            // Changed in place through the dictionary, so that a many-item bucket's set is not copied.
            if buckets[key]?.insert(id) == nil { buckets[key] = .one(id) }
        }
    }

    mutating func remove(_ id: ItemID, _ attributes: ItemAttributes) {
        for key in Self.keys(of: attributes) {
            if buckets[key]?.remove(id) == false { buckets.removeValue(forKey: key) }
        }
    }

    /// Makes room for `count` more keys of each definition without rehashing.
    mutating func reserveCapacity(forMoreItems count: Int) {
        buckets.reserveCapacity(buckets.count + 2 * count)
    }

    /// The ids of the items a query can only match, from the most specific index whose attributes the query
    /// gives; `nil` when no index applies (the caller scans).
    func candidates(for query: Query, itemClass: ItemClass) -> [ItemID]? {
        guard let definitions = Self.definitions[itemClass] else { return nil }
        for (number, attributes) in definitions.enumerated() {
            var encoded: [UInt8] = []
            encoded.reserveCapacity(96)
            encoded.append(itemClass.rawValue)
            encoded.append(UInt8(number))
            var complete = true
            for attribute in attributes {
                guard let value = query.attributes[attribute], let stored = StoredAttributeValue(value) else {
                    complete = false
                    break
                }
                AttributeCoding.appendAttribute(tag: attribute.tag, value: stored, to: &encoded)
            }
            if complete { return buckets[Key(definition: UInt8(number), encoded: encoded)]?.ids ?? [] }
        }
        return nil
    }

    private static func keys(of attributes: ItemAttributes) -> [Key] {
        guard let definitions = definitions[attributes.itemClass] else { return [] }
        return definitions.enumerated().map { number, indexed in
            var encoded: [UInt8] = []
            encoded.reserveCapacity(96)
            encoded.append(attributes.itemClass.rawValue)
            encoded.append(UInt8(number))
            for attribute in indexed {
                AttributeCoding.appendAttribute(
                    tag: attribute.tag, value: attributes.stored(attribute.tag) ?? ItemAttributes.defaultValue(of: attribute),
                    to: &encoded)
            }
            return Key(definition: UInt8(number), encoded: encoded)
        }
    }
}
