// Defaults and primary keys (SPEC.md §8.1–§8.3).

extension ItemAttributes {
    /// Returns a copy with every attribute a writer must store explicitly (SPEC.md §8.2, last paragraph):
    /// the class's primary-key attributes, accessGroup, accessible and synchronizable, each added with its
    /// default when absent. Present attributes are left as they are.
    ///
    /// The defaults are an empty string, empty bytes or 0 for primary-key attributes, an empty accessGroup,
    /// accessible 1 (``Accessibility/whenUnlocked``) and synchronizable false. A certificate's type defaults to
    /// 0, "unknown" (SPEC.md §8.2); `Certificate(der:)` fills in the real version.
    ///
    /// For example:
    /// ```swift
    /// let bare = try ItemAttributes(itemClass: .genericPassword, values: [.service: .string("mail")])
    /// let full = bare.withDefaults()
    /// assert(full[.account] == .string(""))
    /// assert(full[.accessible] == .integer(1))
    /// ```
    ///
    /// - Returns: The attributes with the defaults added.
    public func withDefaults() -> ItemAttributes {
        // Attributes built by a typed item or read from a file have them all already: no copy then.
        let explicit = Self.explicitAttributes(of: itemClass)
        guard explicit.contains(where: { entry($0.tag) == nil }) else { return self }
        // At most 20 distinct attributes are allowed in any class, so the result stays under the limit of 64.
        return replacing(explicit.compactMap { entry($0.tag) == nil ? ($0.tag, Self.defaultValue(of: $0)) : nil })
    }

    /// The primary key of the item (SPEC.md §8.3): its class, the values of the class's primary-key
    /// attributes, accessGroup and synchronizable, with absent attributes taken as their defaults.
    ///
    /// For example:
    /// ```swift
    /// let a = try ItemAttributes(itemClass: .genericPassword, values: [.service: .string("mail")])
    /// let b = try a.setting(.label, to: .string("Mail")).setting(.account, to: .string(""))
    /// assert(a.primaryKey == b.primaryKey)  // label is not part of the key; "" is account's default
    /// ```
    public var primaryKey: PrimaryKey {
        var encoded: [UInt8] = []
        encoded.reserveCapacity(128)
        encoded.append(itemClass.rawValue)
        for attribute in Self.keyAttributes(of: itemClass) {
            appendEncoded(attribute.tag, orElse: Self.defaultValue(of: attribute), to: &encoded)
        }
        return PrimaryKey(itemClass: itemClass, encoded: encoded)
    }

    /// The attributes a writer stores explicitly for `itemClass`, in increasing tag order.
    static func explicitAttributes(of itemClass: ItemClass) -> [Attribute] {
        switch itemClass {
        case .genericPassword: return explicitGeneric
        case .internetPassword: return explicitInternet
        case .certificate: return explicitCertificate
        case .key: return explicitKey
        }
    }

    /// The attributes of the primary key of `itemClass`, accessGroup and synchronizable included, in
    /// increasing tag order.
    static func keyAttributes(of itemClass: ItemClass) -> [Attribute] {
        switch itemClass {
        case .genericPassword: return keyGeneric
        case .internetPassword: return keyInternet
        case .certificate: return keyCertificate
        case .key: return keyKey
        }
    }

    /// The value an absent attribute is taken to have (SPEC.md §8.2, last paragraph).
    static func defaultValue(of attribute: Attribute) -> StoredAttributeValue {
        switch attribute {
        case .accessible: return .integer(Accessibility.whenUnlocked.rawValue)
        default:
            switch attribute.type {
            case .string: return .string("")
            case .bytes: return .bytes([])
            case .integer: return .integer(0)
            case .boolean: return .boolean(false)
            case .date: return .date(milliseconds: 0)
            }
        }
    }

    private static func sortedByTag(_ attributes: [Attribute]) -> [Attribute] {
        attributes.sorted { $0.tag < $1.tag }
    }

    private static func fullKey(of itemClass: ItemClass) -> [Attribute] {
        sortedByTag([.accessGroup, .synchronizable] + Attribute.primaryKey(of: itemClass))
    }

    private static let keyGeneric = fullKey(of: .genericPassword)
    private static let keyInternet = fullKey(of: .internetPassword)
    private static let keyCertificate = fullKey(of: .certificate)
    private static let keyKey = fullKey(of: .key)
    private static let explicitGeneric = sortedByTag(keyGeneric + [.accessible])
    private static let explicitInternet = sortedByTag(keyInternet + [.accessible])
    private static let explicitCertificate = sortedByTag(keyCertificate + [.accessible])
    private static let explicitKey = sortedByTag(keyKey + [.accessible])
}
