/// One kind of keychain attribute: its tag in the file, its name, its value type and the item classes
/// that may carry it (SPEC.md §8.2).
///
/// Every attribute is one of the static constants (``service``, ``account``, ``label``, …), listed in
/// ``all``. Attributes are equal when their tags are equal, and they serve as dictionary keys:
///
/// ```swift
/// let values: [Attribute: AttributeValue] = [.service: .string("mail"), .account: .string("ann")]
/// let attributes = try ItemAttributes(itemClass: .genericPassword, values: values)
/// assert(Attribute.service.isAllowed(in: .genericPassword))
/// assert(Attribute.withTag(0x0102) == .service)
/// ```
public struct Attribute: Hashable, Sendable, CustomStringConvertible {
    /// The attribute's tag in the file; tags are global, the same in every class.
    public let tag: UInt16
    /// The attribute's name as in SPEC.md §8.2, such as "service" or "description".
    public var name: String { staticName.description }
    /// The name as the catalogue spells it. A static string, so that an attribute holds nothing counted:
    /// attributes are copied into and out of every query, match and validation, and with a `String` here
    /// each copy retained and released it through the runtime's copy functions.
    private let staticName: StaticString
    /// The type every value of this attribute has.
    public let type: AttributeType
    /// The classes whose items may carry the attribute, one bit per class code.
    let classMask: UInt8
    /// For integer attributes, the values SPEC.md §8.2 allows; `nil` when any `Int64` is allowed.
    let integerRange: ClosedRange<Int64>?

    init(tag: UInt16, name: StaticString, type: AttributeType, classes: UInt8, range: ClosedRange<Int64>? = nil) {
        self.tag = tag
        self.staticName = name
        self.type = type
        self.classMask = classes
        self.integerRange = range
    }

    /// The classes whose items may carry the attribute.
    public var classes: Set<ItemClass> {
        Set(ItemClass.allCases.filter(isAllowed(in:)))
    }

    /// Returns whether items of `itemClass` may carry this attribute.
    ///
    /// For example:
    /// ```swift
    /// assert(Attribute.server.isAllowed(in: .internetPassword))
    /// assert(!Attribute.server.isAllowed(in: .genericPassword))
    /// ```
    ///
    /// - Parameter itemClass: The class to check.
    /// - Returns: `true` when SPEC.md §8.2 lists the class for this attribute.
    public func isAllowed(in itemClass: ItemClass) -> Bool {
        classMask & Attribute.bit(for: itemClass) != 0
    }

    /// Returns the attribute with the given tag, or `nil` for a tag SPEC.md §8.2 does not define.
    ///
    /// For example:
    /// ```swift
    /// assert(Attribute.withTag(0x0005) == .creationDate)
    /// assert(Attribute.withTag(0x7777) == nil)
    /// ```
    ///
    /// - Parameter tag: A tag read from a file or chosen by the caller.
    /// - Returns: The attribute, or `nil`.
    public static func withTag(_ tag: UInt16) -> Attribute? {
        AttributeShape.withTag(tag)?.attribute
    }

    /// Returns the attributes that form the primary key of `itemClass` (SPEC.md §8.1), in increasing tag
    /// order. accessGroup and synchronizable, which belong to every primary key, are not listed.
    ///
    /// For example:
    /// ```swift
    /// assert(Attribute.primaryKey(of: .genericPassword) == [.account, .service])
    /// ```
    ///
    /// - Parameter itemClass: The class.
    /// - Returns: The class's own primary-key attributes.
    public static func primaryKey(of itemClass: ItemClass) -> [Attribute] {
        switch itemClass {
        case .genericPassword: return [.account, .service]
        case .internetPassword:
            return [.account, .server, .securityDomain, .protocolType, .authenticationType, .port, .path]
        case .certificate: return [.certificateType, .issuer, .serialNumber]
        case .key:
            return [.keyClass, .applicationLabel, .applicationTag, .keyType, .keySizeInBits, .effectiveKeySize]
        }
    }

    /// The attribute's name, as in SPEC.md §8.2.
    public var description: String { name }

    /// Attributes are equal when their tags are: tags are global (SPEC.md §8.2).
    public static func == (lhs: Attribute, rhs: Attribute) -> Bool { lhs.tag == rhs.tag }

    /// Hashes the tag, which identifies the attribute.
    public func hash(into hasher: inout Hasher) { hasher.combine(tag) }

    static func bit(for itemClass: ItemClass) -> UInt8 { 1 << (itemClass.rawValue &- 1) }
}
