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
        withPrimaryKeyEncoding { key in PrimaryKey(itemClass: itemClass, encoded: Array(key)) }
    }

    /// `primaryKey.hashValue`, without making the key: its encoding is written into scratch memory and hashed
    /// as ``PrimaryKey/hash(into:)`` hashes it. What opening a file computes for every item it reads.
    var primaryKeyHashValue: Int {
        withPrimaryKeyEncoding { key in
            var hasher = Hasher()
            hasher.combine(bytes: key)
            return hasher.finalize()
        }
    }

    /// Calls `body` with the primary key's canonical encoding (``PrimaryKey``): the class code, then each key
    /// attribute as stored, or as its default when absent, in tag order. The encoding is written in one walk over
    /// the attributes (they are in tag order, as the key attributes are) into scratch memory, on the stack for
    /// the usual few hundred bytes.
    func withPrimaryKeyEncoding<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let plan = Self.keyPlan(of: itemClass)
        return encoded.withUnsafeBytes { raw in
            // The key is at most the class code, every stored attribute and every default.
            let capacity = 1 + raw.count + plan.reduce(0) { $0 + $1.fallback.count }
            return withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1) { out in
                out[0] = itemClass.rawValue
                var written = 1
                func append(_ bytes: UnsafeRawBufferPointer) {
                    UnsafeMutableRawBufferPointer(rebasing: out[written..<(written + bytes.count)]).copyMemory(from: bytes)
                    written += bytes.count
                }
                var next = Self.entry(in: raw, at: 0)
                for key in plan {
                    while let entry = next, entry.tag < key.tag { next = Self.entry(in: raw, at: entry.value.upperBound) }
                    if let entry = next, entry.tag == key.tag {
                        append(UnsafeRawBufferPointer(rebasing: raw[entry.start..<entry.value.upperBound]))
                    } else {
                        key.fallback.withUnsafeBytes { append($0) }
                    }
                }
                return body(UnsafeRawBufferPointer(rebasing: out[..<written]))
            }
        }
    }

    /// A class's key attributes in tag order, each with the encoding (`tag ‖ type ‖ length ‖ value`) of its
    /// default, which stands in for it in the key when an item does not have it.
    private static func keyPlan(of itemClass: ItemClass) -> [(tag: UInt16, fallback: [UInt8])] {
        switch itemClass {
        case .genericPassword: return keyPlanGeneric
        case .internetPassword: return keyPlanInternet
        case .certificate: return keyPlanCertificate
        case .key: return keyPlanKey
        }
    }

    private static func makeKeyPlan(_ itemClass: ItemClass) -> [(tag: UInt16, fallback: [UInt8])] {
        keyAttributes(of: itemClass).map { attribute in
            var fallback: [UInt8] = []
            AttributeCoding.appendAttribute(tag: attribute.tag, value: defaultValue(of: attribute), to: &fallback)
            return (attribute.tag, fallback)
        }
    }

    private static let keyPlanGeneric = makeKeyPlan(.genericPassword)
    private static let keyPlanInternet = makeKeyPlan(.internetPassword)
    private static let keyPlanCertificate = makeKeyPlan(.certificate)
    private static let keyPlanKey = makeKeyPlan(.key)

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
