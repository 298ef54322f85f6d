/// A search for keychain items, as Apple's `SecItemCopyMatching` query dictionaries: a class, attribute
/// values every match must have, and what to return.
///
/// Every given attribute must equal the item's exactly (strings byte for byte, dates to the millisecond);
/// attributes not given match anything. The synchronizable flag is matched by ``synchronizable`` (not by
/// an entry in ``attributes``), and a ``persistentReference`` restricts the search to one item.
///
/// For example:
/// ```swift
/// var query = Query.genericPassword(service: "mail")
/// query.returning = [.attributes, .data]
/// query.limit = .one
/// try query.validate()
/// ```
public struct Query: Sendable, Hashable {
    /// The class searched.
    public var itemClass: QueryClass
    /// Attribute values every match must have.
    public var attributes: [Attribute: AttributeValue]
    /// Which items match by their synchronizable flag.
    public var synchronizable: SynchronizableMatch
    /// When set, only the item this reference points to can match (compared by the caller on the item id).
    public var persistentReference: PersistentReference?
    /// How many matches to return.
    public var limit: MatchLimit
    /// What to return for each match.
    public var returning: ReturnOptions

    /// Creates a query.
    ///
    /// For example:
    /// ```swift
    /// let query = Query(.internetPassword, attributes: [.server: .string("example.com")], limit: .one)
    /// ```
    ///
    /// - Parameters:
    ///   - itemClass: The class to search.
    ///   - attributes: Attribute values every match must have.
    ///   - synchronizable: Which items match by their synchronizable flag; `.no` as in Apple's keychain.
    ///   - persistentReference: The one item to consider, or `nil` for all.
    ///   - limit: How many matches to return.
    ///   - returning: What to return for each match.
    public init(
        _ itemClass: QueryClass, attributes: [Attribute: AttributeValue] = [:],
        synchronizable: SynchronizableMatch = .no, persistentReference: PersistentReference? = nil,
        limit: MatchLimit = .all, returning: ReturnOptions = [.attributes]
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.synchronizable = synchronizable
        self.persistentReference = persistentReference
        self.limit = limit
        self.returning = returning
    }

    /// Checks that every attribute may appear in an item of the query's class (for ``QueryClass/identity``,
    /// in a certificate or a key) and that its value has the attribute's type and is within its limits.
    ///
    /// For example:
    /// ```swift
    /// try Query(.genericPassword, attributes: [.server: .string("x")]).validate()  // throws: not allowed
    /// ```
    ///
    /// - Throws: `KeychainError.invalidParameter` naming the attribute; also when ``attributes`` contains
    ///   synchronizable, which is matched through ``synchronizable`` instead.
    public func validate() throws(KeychainError) {
        // Checked in dictionary order first, which needs no sorting; only when something is wrong is the
        // check repeated in tag order, so that the error names the same attribute every time.
        guard attributes.contains(where: { !Self.isValid($0.value, for: $0.key, in: itemClass) }) else { return }
        for (attribute, value) in attributes.sorted(by: { $0.key.tag < $1.key.tag }) {
            try Self.check(value, for: attribute, in: itemClass)
        }
    }

    private static func isValid(_ value: AttributeValue, for attribute: Attribute, in itemClass: QueryClass) -> Bool {
        do throws(KeychainError) {
            try check(value, for: attribute, in: itemClass)
            return true
        } catch {
            return false
        }
    }

    private static func check(_ value: AttributeValue, for attribute: Attribute, in itemClass: QueryClass) throws(KeychainError) {
        guard attribute != .synchronizable else {
            throw .invalidParameter("synchronizable: set Query.synchronizable instead of an attribute value")
        }
        guard searches(itemClass, anyClassAllowing: attribute) else {
            throw .invalidParameter("\(attribute.name): not allowed in a query for \(itemClass) items")
        }
        _ = try ItemAttributes.validated(value, for: attribute)
    }

    /// Returns whether an item with `attributes` matches the query, apart from ``persistentReference``
    /// (matched by the caller on the item id).
    ///
    /// The item's class must be the query's (a certificate or a key for ``QueryClass/identity``, where only
    /// the attributes allowed in the item's class are compared; the caller pairs the halves); every query
    /// attribute must equal the item's value, an absent item attribute counting as its default when it is
    /// one the file always stores (SPEC.md §8.2); and the item's synchronizable flag must fit
    /// ``synchronizable``.
    ///
    /// For example:
    /// ```swift
    /// let item = try GenericPassword(service: "mail", account: "ann").attributes
    /// assert(Query.genericPassword(service: "mail").matches(item))
    /// ```
    ///
    /// - Parameter attributes: The item's attributes.
    /// - Returns: `true` when the item matches.
    public func matches(_ attributes: ItemAttributes) -> Bool {
        Matcher(self).matches(attributes)
    }

    /// Returns whether a certificate and a private key form an identity that matches the query: they pair
    /// up (SPEC.md §8.1), each matches as in ``matches(_:)`` with the attributes of its own class, and
    /// attributes both classes have (accessGroup, label, …) are compared with the certificate's.
    ///
    /// For example:
    /// ```swift
    /// let found = Query(.identity, attributes: [.label: .string("Ann")]).matchesIdentity(
    ///     certificate: certificateAttributes, privateKey: keyAttributes)
    /// ```
    ///
    /// - Parameters:
    ///   - certificate: The certificate's attributes.
    ///   - privateKey: The key's attributes.
    /// - Returns: `true` when the pair is an identity and matches.
    public func matchesIdentity(certificate: ItemAttributes, privateKey: ItemAttributes) -> Bool {
        guard itemClass == .identity, certificate.itemClass == .certificate, privateKey.itemClass == .key,
            privateKey.integer(.keyClass) == KeyClass.privateKey.rawValue,
            let hash = certificate.bytes(.publicKeyHash), privateKey.bytes(.applicationLabel) == hash
        else { return false }
        var keyQuery = self
        keyQuery.attributes = attributes.filter { !$0.key.isAllowed(in: .certificate) }
        return Matcher(self).matches(certificate) && Matcher(keyQuery).matches(privateKey)
    }

    /// Whether a query for `queryClass` searches items of `itemClass`.
    static func searches(_ queryClass: QueryClass, _ itemClass: ItemClass) -> Bool {
        if let searched = queryClass.itemClass { return searched == itemClass }
        return itemClass == .certificate || itemClass == .key
    }

    /// Whether `attribute` may appear in some item class a query for `queryClass` searches.
    private static func searches(_ queryClass: QueryClass, anyClassAllowing attribute: Attribute) -> Bool {
        if let searched = queryClass.itemClass { return attribute.isAllowed(in: searched) }
        return attribute.isAllowed(in: .certificate) || attribute.isAllowed(in: .key)
    }

    /// The value an absent attribute is taken to have: the default for attributes a writer always stores
    /// (SPEC.md §8.2), none for the others (which then match no query value).
    static func implicitValue(of attribute: Attribute, in itemClass: ItemClass) -> StoredAttributeValue? {
        guard ItemAttributes.explicitAttributes(of: itemClass).contains(attribute) else { return nil }
        return ItemAttributes.defaultValue(of: attribute)
    }
}
