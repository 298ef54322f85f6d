import Foundation
import KeychainFile

/// A SecItem dictionary read into its parts: class, attributes, synchronizable match, match limit, return
/// keys and values. Each operation then checks which parts it accepts.
///
/// Attribute values are read once the class is known (`attributes(in:)`), because Apple's `"type"` key
/// names a different attribute in passwords and in keys.
struct SecItemDictionary {
    /// `kSecMatchLimit`.
    enum Limit: Equatable {
        /// `kSecMatchLimitOne` or 1: one result, returned as one object.
        case one
        /// `kSecMatchLimitAll`: every match, returned as an array.
        case all
        /// A number above 1: at most that many matches, returned as an array.
        case count(Int)
    }

    /// `kSecAttrSynchronizable`.
    enum Synchronizable {
        /// A Boolean.
        case flag(Bool)
        /// `kSecAttrSynchronizableAny`.
        case any
    }

    /// `kSecClass`, if given.
    private(set) var itemClass: QueryClass?
    /// The attribute keys and their values, unread, in key order.
    private(set) var attributeEntries: [(key: String, value: Any)] = []
    /// `kSecAttrSynchronizable`, if given.
    private(set) var synchronizable: Synchronizable?
    /// `kSecMatchLimit`, if given.
    private(set) var limit: Limit?
    /// The return keys set to `true`, apart from `kSecReturnRef`.
    private(set) var returning: ReturnOptions = []
    /// Whether `kSecReturnRef` is `true`.
    private(set) var returnsReference = false
    /// `kSecValueData`, if given.
    private(set) var valueData: [UInt8]?
    /// Whether `kSecValueRef` is given.
    private(set) var hasValueReference = false
    /// `kSecValuePersistentRef`, if given.
    private(set) var persistentReference: PersistentReference?

    /// Reads a dictionary.
    ///
    /// - Throws: errSecParam for an unknown key or a value of the wrong type; errSecNoSuchClass for an
    ///   unknown class.
    init(_ dictionary: [String: Any]) throws(SecItemFailure) {
        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
            try read(key, value)
        }
    }

    private mutating func read(_ key: String, _ value: Any) throws(SecItemFailure) {
        switch key {
        case kSecClass:
            itemClass = try SecItemClasses.queryClass(value)
        case kSecAttrSynchronizable:
            if SecItemValueReader.string(value) == kSecAttrSynchronizableAny {
                synchronizable = .any
            } else if let flag = SecItemValueReader.boolean(value) {
                synchronizable = .flag(flag)
            } else {
                throw .parameter("\(SecItemKeyNames.describe(key)): expected a Boolean or kSecAttrSynchronizableAny")
            }
        case _ where SecItemAttributeKeys.isAttributeKey(key):
            attributeEntries.append((key, value))
        case kSecMatchLimit:
            limit = try Self.limit(value)
        case kSecReturnData, kSecReturnAttributes, kSecReturnPersistentRef, kSecReturnRef:
            guard let flag = SecItemValueReader.boolean(value) else { throw .parameter("\(SecItemKeyNames.describe(key)): expected a Boolean") }
            switch key {
            case kSecReturnData: if flag { returning.insert(.data) }
            case kSecReturnAttributes: if flag { returning.insert(.attributes) }
            case kSecReturnPersistentRef: if flag { returning.insert(.persistentReference) }
            default: returnsReference = flag
            }
        case kSecValueData:
            guard let unwrapped = SecItemValueReader.unwrapped(value), unwrapped as? String == nil,
                  let bytes = SecItemValueReader.bytes(unwrapped) else {
                throw .parameter("\(SecItemKeyNames.describe(key)): expected Data, got \(SecItemValueReader.describe(value))")
            }
            valueData = bytes
        case kSecValueRef:
            hasValueReference = true
        case kSecValuePersistentRef:
            guard let unwrapped = SecItemValueReader.unwrapped(value), unwrapped as? String == nil,
                  let bytes = SecItemValueReader.bytes(unwrapped) else {
                throw .parameter("\(SecItemKeyNames.describe(key)): expected Data, got \(SecItemValueReader.describe(value))")
            }
            do {
                persistentReference = try PersistentReference(bytes: bytes)
            } catch {
                throw .parameter("\(SecItemKeyNames.describe(key)): not a persistent reference of this keychain (\(error))")
            }
        case kSecUseDataProtectionKeychain:
            guard SecItemValueReader.boolean(value) != nil else { throw .parameter("\(SecItemKeyNames.describe(key)): expected a Boolean") }
        default:
            throw .parameter("\(SecItemKeyNames.describe(key)): not a key the SecItem functions know")
        }
    }

    /// Reads a `kSecMatchLimit` value.
    private static func limit(_ value: Any) throws(SecItemFailure) -> Limit {
        if let name = SecItemValueReader.string(value) {
            switch name {
            case kSecMatchLimitOne: return .one
            case kSecMatchLimitAll: return .all
            default: break
            }
        } else if let count = SecItemValueReader.integer(value), count > 0, let count = Int(exactly: count) {
            return count == 1 ? .one : .count(count)
        }
        throw .parameter("kSecMatchLimit: expected kSecMatchLimitOne, kSecMatchLimitAll or a positive integer")
    }

    /// The attributes, read as attributes of `itemClass` (without `kSecAttrSynchronizable`).
    ///
    /// - Throws: errSecNoSuchAttr for a key items of the class do not have; errSecParam for a value of the
    ///   wrong type.
    func attributes(in itemClass: QueryClass) throws(SecItemFailure) -> [Attribute: AttributeValue] {
        var values: [Attribute: AttributeValue] = [:]
        for (key, value) in attributeEntries {
            let attribute = try SecItemAttributeKeys.attribute(forKey: key, in: itemClass)
            values[attribute] = try SecItemValueReader.attributeValue(value, for: attribute, key: key)
        }
        return values
    }

    /// The KeychainFile query for this dictionary's attributes, synchronizable match and persistent
    /// reference, searching `itemClass` (limit and return options are the caller's).
    func query(in itemClass: QueryClass) throws(SecItemFailure) -> Query {
        let match: SynchronizableMatch
        switch synchronizable {
        case nil, .flag(false)?: match = .no
        case .flag(true)?: match = .yes
        case .any?: match = .any
        }
        return Query(itemClass, attributes: try attributes(in: itemClass), synchronizable: match,
                     persistentReference: persistentReference, limit: .all, returning: [])
    }
}
