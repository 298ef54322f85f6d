/// What the typed items (``GenericPassword``, ``InternetPassword``, ``Certificate``, ``Key``) have in
/// common: a class, validated attributes and a secret value, and a way back from attributes.
///
/// Code that stores items can be written once over this protocol:
///
/// ```swift
/// func describe<Item: KeychainItem>(_ item: Item) throws -> String {
///     let attributes = try item.attributes
///     return "\(Item.itemClass) with \(attributes.count) attributes"
/// }
/// ```
public protocol KeychainItem: Hashable, Sendable {
    /// The class every item of this type has.
    static var itemClass: ItemClass { get }

    /// The item's attributes, checked, with every attribute a writer must store (SPEC.md §8.2) present.
    ///
    /// - Throws: `KeychainError.invalidParameter` naming the field when a value breaks a limit, such as a
    ///   string longer than 65,535 bytes of UTF-8.
    var attributes: ItemAttributes { get throws(KeychainError) }

    /// The secret: a password, a certificate's DER or a key's bytes; `nil` when it was not loaded.
    var value: [UInt8]? { get set }

    /// Creates the item from stored attributes and, when it was loaded, its secret.
    ///
    /// - Throws: `KeychainError.invalidParameter` when the attributes are of another class.
    init(attributes: ItemAttributes, value: [UInt8]?) throws(KeychainError)
}

extension KeychainItem {
    /// Throws unless `attributes` belong to this item type's class.
    static func requireClass(of attributes: ItemAttributes) throws(KeychainError) {
        guard attributes.itemClass == itemClass else {
            throw .invalidParameter("\(Self.self) needs attributes of class \(itemClass), not \(attributes.itemClass)")
        }
    }
}
