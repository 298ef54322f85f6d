/// What a search returns for one match.
public struct SearchResult: Sendable {
    /// One stored item's part of a result.
    public struct Item: Sendable {
        /// The item's persistent reference, if asked for.
        public let persistentReference: PersistentReference?
        /// The item's attributes, if asked for.
        public let attributes: ItemAttributes?
        /// The item's secret, if asked for.
        public let value: [UInt8]?
    }

    /// The class searched for.
    public let itemClass: QueryClass
    /// The matched item; for an identity, its certificate.
    public let item: Item
    /// For an identity, its private key; otherwise `nil`.
    public let privateKey: Item?

    /// The matched item's persistent reference, if asked for.
    public var persistentReference: PersistentReference? { item.persistentReference }
    /// The matched item's attributes, if asked for.
    public var attributes: ItemAttributes? { item.attributes }
    /// The matched item's secret, if asked for.
    public var value: [UInt8]? { item.value }
}
