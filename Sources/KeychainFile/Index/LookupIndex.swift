/// Secondary indexes over primary-key attributes, so that the common searches — a password by service and
/// account, an internet password by server, a private key by application label — do not scan every item.
///
/// Each index maps the values of some primary-key attributes (which every item stores, SPEC.md §8.2) to the
/// items with those values. A query that gives all the attributes of an index is answered from it; the
/// query's conditions are then checked item by item.
///
/// The map is keyed by a 64-bit digest of the class, the index and the values rather than by the values
/// themselves: the keys then sit inline in the hash table (nothing per key to allocate, keep and follow on
/// every lookup). Two keys with one digest only put an extra candidate in a bucket, which the caller's
/// per-item check rejects, so the digest need not be exact. It is computed with the standard library's `Hasher`, seeded at random
/// per process, so item contents cannot be chosen to pile items into one bucket.
struct LookupIndex: Sendable {
    /// The indexed attribute sets per class, most specific first.
    static func definitions(of itemClass: ItemClass) -> [[Attribute]] {
        switch itemClass {
        case .genericPassword: return genericDefinitions
        case .internetPassword: return internetDefinitions
        case .certificate: return certificateDefinitions
        case .key: return keyDefinitions
        }
    }

    private static let genericDefinitions: [[Attribute]] = [[.service, .account], [.service]]
    private static let internetDefinitions: [[Attribute]] = [[.server, .account], [.server]]
    private static let certificateDefinitions: [[Attribute]] = [[.issuer, .serialNumber]]
    private static let keyDefinitions: [[Attribute]] = [[.applicationLabel]]

    /// A class's definitions as ``forEachDigest(of:_:)`` walks them: the attributes of the longest (every other
    /// definition of a class is a prefix of it), each with the value an item without it is taken to have,
    /// and where each definition ends in it, shortest first.
    private struct DigestPlan {
        /// Each attribute's tag, with the encoding (`tag ‖ type ‖ length ‖ value`) of the value an item without it
        /// is taken to have.
        let keys: [(tag: UInt16, fallback: [UInt8])]
        let ends: [(attributeCount: Int, number: Int)]

        init(_ definitions: [[Attribute]]) {
            precondition(definitions.count <= Digests.capacity, "more lookup definitions than Digests holds")
            let longest = definitions.max { $0.count < $1.count } ?? []
            for definition in definitions {
                precondition(Array(longest.prefix(definition.count)) == definition, "each definition is a prefix of the longest")
            }
            keys = longest.map { attribute in
                var fallback: [UInt8] = []
                AttributeCoding.appendAttribute(tag: attribute.tag, value: ItemAttributes.defaultValue(of: attribute), to: &fallback)
                return (attribute.tag, fallback)
            }
            ends = definitions.enumerated().map { ($0.element.count, $0.offset) }.sorted { $0.attributeCount < $1.attributeCount }
        }
    }

    private static let genericPlan = DigestPlan(genericDefinitions)
    private static let internetPlan = DigestPlan(internetDefinitions)
    private static let certificatePlan = DigestPlan(certificateDefinitions)
    private static let keyPlan = DigestPlan(keyDefinitions)

    private static func plan(of itemClass: ItemClass) -> DigestPlan {
        switch itemClass {
        case .genericPassword: return genericPlan
        case .internetPassword: return internetPlan
        case .certificate: return certificatePlan
        case .key: return keyPlan
        }
    }

    /// Digest → positions of the items in the ``ItemIndex``'s pages.
    private var buckets = DigestTable()

    /// Enters the item at `position` under each of its digests.
    mutating func insert(_ position: Int, _ attributes: ItemAttributes) {
        insert(position, Self.digests(of: attributes))
    }

    /// Enters the item at `position` under `digests`, which ``digests(of:)`` computed from its attributes.
    mutating func insert(_ position: Int, _ digests: Digests) {
        for index in 0..<digests.count { buckets.insert(digests[index], position) }
    }

    /// The digests of an item's index keys, one per definition of its class (at most ``Digests/capacity``),
    /// held inline so that they can be computed on one thread and entered on another without an allocation.
    struct Digests: Sendable, Equatable {
        /// The most definitions a class has.
        static let capacity = 2
        private var first = 0, second = 0
        private(set) var count = 0

        subscript(index: Int) -> Int {
            precondition(index >= 0 && index < count, "lookup digest index out of range")
            return index == 0 ? first : second
        }

        mutating func append(_ digest: Int) {
            switch count {
            case 0: first = digest
            case 1: second = digest
            default: preconditionFailure("a class with more than \(Self.capacity) lookup definitions")
            }
            count += 1
        }
    }

    /// The digests of the index keys of an item with `attributes`.
    static func digests(of attributes: ItemAttributes) -> Digests {
        var digests = Digests()
        forEachDigest(of: attributes) { digests.append($0) }
        return digests
    }

    /// Takes the item at `position` out from under each of its digests.
    mutating func remove(_ position: Int, _ attributes: ItemAttributes) {
        Self.forEachDigest(of: attributes) { digest in buckets.remove(digest, position) }
    }

    /// Follows the item with `attributes` from position `old` to `new`.
    mutating func move(_ attributes: ItemAttributes, from old: Int, to new: Int) {
        Self.forEachDigest(of: attributes) { digest in buckets.move(digest, from: old, to: new) }
    }

    /// Makes room for `count` more items without rehashing.
    mutating func reserveCapacity(forMoreItems count: Int) {
        // Room for one digest per new item: an item has a digest per definition, but the shorter definitions
        // (a service alone) are shared by many items; a keychain whose digests are all distinct grows once.
        buckets.reserveCapacity(forMore: count)
    }

    /// The items a query can only be matched by, from one index: positions in the ``ItemIndex``'s pages.
    enum Candidates {
        /// No index applies: the caller scans.
        case unindexed
        /// The index has no item with the query's values.
        case none
        case one(Int)
        case many(PositionSet)
    }

    /// The positions of the items a query can only match, from the most specific index whose attributes the
    /// query gives (`value` gives the query's value of an attribute in stored form, or `nil`); `.unindexed`
    /// when no index applies (the caller scans). Every candidate must still be checked against the query: a
    /// bucket may hold items whose key only shares its digest.
    func candidates(itemClass: ItemClass, value: (Attribute) -> StoredAttributeValue?) -> Candidates {
        definitions: for (number, attributes) in Self.definitions(of: itemClass).enumerated() {
            var hasher = Self.startDigest(itemClass)
            for attribute in attributes {
                guard let stored = value(attribute) else { continue definitions }
                stored.combineEncoded(tag: attribute.tag, into: &hasher)
            }
            switch buckets.positions(Self.finishDigest(hasher, number)) {
            case .none: return .none
            case .one(let position): return .one(position)
            case .many(let positions): return .many(positions)
            }
        }
        return .unindexed
    }

    /// Calls `body` with the digest of each index key of an item. The definitions of a class share their
    /// attributes as a prefix (see ``DigestPlan``), so the item's values are read and hashed once, and each
    /// definition's digest is finished from a copy of the hasher where its attributes end.
    private static func forEachDigest(of attributes: ItemAttributes, _ body: (Int) -> Void) {
        let plan = plan(of: attributes.itemClass)
        var hasher = startDigest(attributes.itemClass)
        var taken = 0
        for end in plan.ends {
            while taken < end.attributeCount {
                let key = plan.keys[taken]
                attributes.combineAttribute(key.tag, orElse: key.fallback, into: &hasher)
                taken += 1
            }
            body(finishDigest(hasher, end.number))
        }
    }

    /// A hasher that has taken in the class; each attribute as the file encodes it (`tag ‖ type ‖ length ‖ value`,
    /// the same bytes for equal values) follows, then ``finishDigest(_:_:)`` with the definition's number.
    private static func startDigest(_ itemClass: ItemClass) -> Hasher {
        var hasher = Hasher()
        hasher.combine(itemClass.rawValue)
        return hasher
    }

    /// The digest of a definition's key, from a hasher that has taken in the class and the key's attributes.
    private static func finishDigest(_ hasher: Hasher, _ number: Int) -> Int {
        var hasher = hasher
        hasher.combine(UInt8(truncatingIfNeeded: number))
        return hasher.finalize()
    }
}
