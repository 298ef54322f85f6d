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
    }

    /// The indexed attribute sets per class, most specific first.
    static let definitions: [ItemClass: [[Attribute]]] = [
        .genericPassword: [[.service, .account], [.service]],
        .internetPassword: [[.server, .account], [.server]],
        .certificate: [[.issuer, .serialNumber]],
        .key: [[.applicationLabel]],
    ]

    private var buckets: [Key: Set<ItemID>] = [:]

    mutating func insert(_ id: ItemID, _ attributes: ItemAttributes) {
        for key in Self.keys(of: attributes) { buckets[key, default: []].insert(id) }
    }

    mutating func remove(_ id: ItemID, _ attributes: ItemAttributes) {
        for key in Self.keys(of: attributes) {
            buckets[key]?.remove(id)
            if buckets[key]?.isEmpty == true { buckets.removeValue(forKey: key) }
        }
    }

    /// The ids of the items a query can only match, from the most specific index whose attributes the query
    /// gives; `nil` when no index applies (the caller scans).
    func candidates(for query: Query, itemClass: ItemClass) -> Set<ItemID>? {
        guard let definitions = Self.definitions[itemClass] else { return nil }
        for (number, attributes) in definitions.enumerated() {
            var encoded: [UInt8] = [itemClass.rawValue, UInt8(number)]
            var complete = true
            for attribute in attributes {
                guard let value = query.attributes[attribute], let stored = StoredAttributeValue(value) else {
                    complete = false
                    break
                }
                AttributeCoding.appendAttribute(tag: attribute.tag, value: stored, to: &encoded)
            }
            if complete { return buckets[Key(definition: UInt8(number), encoded: encoded)] ?? [] }
        }
        return nil
    }

    private static func keys(of attributes: ItemAttributes) -> [Key] {
        guard let definitions = definitions[attributes.itemClass] else { return [] }
        return definitions.enumerated().map { number, indexed in
            var encoded: [UInt8] = [attributes.itemClass.rawValue, UInt8(number)]
            for attribute in indexed {
                AttributeCoding.appendAttribute(
                    tag: attribute.tag, value: attributes.stored(attribute.tag) ?? ItemAttributes.defaultValue(of: attribute),
                    to: &encoded)
            }
            return Key(definition: UInt8(number), encoded: encoded)
        }
    }
}
