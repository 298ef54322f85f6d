import KeychainFile

/// Queries for the item a new one collides with, and the changes that turn that item into the new one: how
/// `add-…-password -U` and `import -U` update instead of failing with "already exists".
enum PrimaryKeyQuery {
    /// A query for exactly the item with the primary key of `attributes` (absent parts at their defaults).
    static func query(for attributes: ItemAttributes) -> Query {
        let full = attributes.withDefaults()
        var values: [Attribute: AttributeValue] = [:]
        for attribute in Attribute.primaryKey(of: attributes.itemClass) + [.accessGroup] {
            values[attribute] = full[attribute]
        }
        return Query(queryClass(of: attributes.itemClass), attributes: values)
    }

    /// The attributes of `attributes` that are not part of the primary key, nor the dates the keychain sets: what
    /// an update writes over the existing item.
    static func changes(_ attributes: ItemAttributes) -> [Attribute: AttributeValue] {
        let fixed = Set(Attribute.primaryKey(of: attributes.itemClass) + [.accessGroup, .synchronizable, .creationDate, .modificationDate])
        var changes: [Attribute: AttributeValue] = [:]
        for (attribute, value) in attributes where !fixed.contains(attribute) { changes[attribute] = value }
        return changes
    }

    /// The query class of a stored class.
    static func queryClass(of itemClass: ItemClass) -> QueryClass {
        switch itemClass {
        case .genericPassword: return .genericPassword
        case .internetPassword: return .internetPassword
        case .certificate: return .certificate
        case .key: return .key
        }
    }
}
