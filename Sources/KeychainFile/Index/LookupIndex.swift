/// Secondary indexes over primary-key attributes, so that the common searches — a password by service and
/// account, an internet password by server, a private key by application label — do not scan every item.
///
/// Each index maps the canonical encoding of some primary-key attributes (which every item stores, SPEC.md
/// §8.2) to the items with those values. A query that gives all the attributes of an index is answered
/// from it; the query's conditions are then checked item by item.
///
/// The map is keyed by a 64-bit digest of the encoding rather than by the encoding itself: the keys then sit
/// inline in the hash table (no array per key to allocate, keep and follow on every lookup). Two encodings
/// with one digest only put an extra candidate in a bucket, which the caller's per-item check rejects, so
/// the digest need not be exact. It is computed with the standard library's `Hasher`, seeded at random
/// per process, so item contents cannot be chosen to pile items into one bucket.
struct LookupIndex: Sendable {
    /// The items with one key: most keys (service and account, say) name one item, which is kept without
    /// allocating a set.
    enum Bucket: Sendable {
        case one(ItemID)
        case many(Set<ItemID>)

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

    private var buckets: [Int: Bucket] = [:]

    mutating func insert(_ id: ItemID, _ attributes: ItemAttributes) {
        Self.forEachDigest(of: attributes) { digest in
            // Changed in place through the dictionary, so that a many-item bucket's set is not copied.
            if buckets[digest]?.insert(id) == nil { buckets[digest] = .one(id) }
        }
    }

    mutating func remove(_ id: ItemID, _ attributes: ItemAttributes) {
        Self.forEachDigest(of: attributes) { digest in
            if buckets[digest]?.remove(id) == false { buckets.removeValue(forKey: digest) }
        }
    }

    /// Makes room for `count` more keys of each definition without rehashing.
    mutating func reserveCapacity(forMoreItems count: Int) {
        buckets.reserveCapacity(buckets.count + 2 * count)
    }

    /// The items a query can only be matched by, from one index.
    enum Candidates {
        /// No index applies: the caller scans.
        case unindexed
        /// The index has no item with the query's values.
        case none
        case one(ItemID)
        case many(Set<ItemID>)
    }

    /// The ids of the items a query can only match, from the most specific index whose attributes the query
    /// gives; `.unindexed` when no index applies (the caller scans). Every candidate must still be checked
    /// against the query: a bucket may hold items whose key only shares its digest.
    func candidates(for query: Query, itemClass: ItemClass) -> Candidates {
        guard let definitions = Self.definitions[itemClass] else { return .unindexed }
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
            guard complete else { continue }
            switch buckets[Self.digest(encoded)] {
            case nil: return .none
            case .one(let id): return .one(id)
            case .many(let ids): return .many(ids)
            }
        }
        return .unindexed
    }

    /// Calls `body` with the digest of each index key of an item.
    private static func forEachDigest(of attributes: ItemAttributes, _ body: (Int) -> Void) {
        guard let definitions = definitions[attributes.itemClass] else { return }
        var encoded: [UInt8] = []
        encoded.reserveCapacity(96)
        for (number, indexed) in definitions.enumerated() {
            encoded.removeAll(keepingCapacity: true)
            encoded.append(attributes.itemClass.rawValue)
            encoded.append(UInt8(number))
            for attribute in indexed {
                AttributeCoding.appendAttribute(
                    tag: attribute.tag, value: attributes.stored(attribute.tag) ?? ItemAttributes.defaultValue(of: attribute),
                    to: &encoded)
            }
            body(digest(encoded))
        }
    }

    /// The digest of a key's encoding (class, definition number, attributes).
    private static func digest(_ encoded: [UInt8]) -> Int {
        var hasher = Hasher()
        encoded.withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize()
    }
}
