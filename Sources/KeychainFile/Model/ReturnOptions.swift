/// What a search returns for each match.
///
/// For example:
/// ```swift
/// var query = Query.genericPassword(service: "mail", account: "ann")
/// query.returning = [.attributes, .data]
/// ```
public struct ReturnOptions: OptionSet, Sendable, Hashable {
    /// The options as bits: 1 attributes, 2 data, 4 persistent reference.
    public let rawValue: UInt8

    /// Creates options from their bits.
    ///
    /// - Parameter rawValue: The bits of ``rawValue``.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The item's attributes.
    public static let attributes = ReturnOptions(rawValue: 1 << 0)
    /// The item's secret value (decrypted on demand).
    public static let data = ReturnOptions(rawValue: 1 << 1)
    /// A ``PersistentReference`` to the item.
    public static let persistentReference = ReturnOptions(rawValue: 1 << 2)
}
