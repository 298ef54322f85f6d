import Foundation
import KeychainFile

/// Adds an item to the selected keychain, like Apple's `SecItemAdd`.
///
/// `attributes` holds `kSecClass`, the item's attributes, and its secret as `kSecValueData` (`Data`; empty
/// when absent). A certificate's `kSecValueData` is its DER: subject, issuer, serial number, subject key
/// identifier, public key hash and version are read from it, and attributes given explicitly override them.
/// Without `kSecAttrAccessGroup` the item goes to the program's first access group (see ``SecItemKeychain``).
/// With a result pointer and return keys (`kSecReturnData`, `kSecReturnAttributes`,
/// `kSecReturnPersistentRef`), the added item is returned as `SecItemCopyMatching` returns one match.
///
/// For example:
/// ```swift
/// let status = SecItemAdd([
///     kSecClass as String: kSecClassGenericPassword,
///     kSecAttrService as String: "com.example.mail",
///     kSecAttrAccount as String: "ann",
///     kSecValueData as String: Data("s3cret".utf8),
/// ], nil)
/// if status == errSecDuplicateItem { /* update it instead */ }
/// ```
///
/// - Parameters:
///   - attributes: The item's class, attributes and secret.
///   - result: Where to store the added item, or `nil`.
/// - Returns: errSecSuccess; errSecDuplicateItem when an item with the same primary key exists; errSecParam
///   for an unknown key, a wrong value type, a missing class or `kSecValuePersistentRef`; errSecNoSuchAttr
///   for an attribute the class does not have; errSecNoSuchClass; errSecMissingEntitlement for an access
///   group that is not the program's; errSecUnimplemented for `kSecValueRef`, `kSecReturnRef` and
///   identities (add the certificate and the private key instead); errSecNoSuchKeychain when no keychain is
///   selected; or the keychain file's error (errSecIO, errSecDecode, …).
public func SecItemAdd(_ attributes: [String: Any], _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemCall.status("SecItemAdd", clearing: result) { (selection) throws(SecItemFailure) in
        try SecItemAddOperation.run(attributes, result: result, selection: selection)
    }
}

/// The work of `SecItemAdd`.
enum SecItemAddOperation {
    static func run(
        _ dictionary: [String: Any], result: UnsafeMutablePointer<CFTypeRef?>?, selection: SecItemKeychain
    ) throws(SecItemFailure) {
        let request = try SecItemDictionary(dictionary)
        try SecItemCall.rejectReferences(request)
        guard let queryClass = request.itemClass else { throw .parameter("kSecClass is missing") }
        guard let itemClass = queryClass.itemClass else {
            throw SecItemFailure(errSecUnimplemented, "identities are added as their certificate and private key")
        }
        guard request.persistentReference == nil else {
            throw .parameter("kSecValuePersistentRef cannot be given to SecItemAdd")
        }
        var values = try request.attributes(in: queryClass)
        switch request.synchronizable {
        case .flag(let flag)?: values[.synchronizable] = .boolean(flag)
        case .any?: throw .parameter("kSecAttrSynchronizableAny is for queries, not for new items")
        case nil: break
        }
        try SecItemScope(selection).assignGroup(to: &values)
        let item = try itemAttributes(itemClass, values, der: itemClass == .certificate ? request.valueData : nil)
        let keychain = selection.keychain
        let secret = request.valueData ?? []
        let reference = try SecItemFailure.library { () throws(KeychainError) in try keychain.add(item, secret: secret) }
        guard let result, !request.returning.isEmpty else { return }
        let query = Query(queryClass, synchronizable: .any, persistentReference: reference, limit: .one)
        let returning = request.returning
        // The item is added whatever happens next: if another thread deleted it already, nothing is returned.
        guard let found = try? keychain.search(query, returning: returning).first else { return }
        result.pointee = SecItemResultShape.object(for: found, returning: returning)
    }

    /// The new item's attributes: `values`, over the fields of the certificate `der` when given.
    private static func itemAttributes(
        _ itemClass: ItemClass, _ values: [Attribute: AttributeValue], der: [UInt8]?
    ) throws(SecItemFailure) -> ItemAttributes {
        try SecItemFailure.library { () throws(KeychainError) -> ItemAttributes in
            guard let der else { return try ItemAttributes(itemClass: itemClass, values: values) }
            var attributes = try Certificate(der: der).attributes
            for (attribute, value) in values.sorted(by: { $0.key.tag < $1.key.tag }) {
                attributes = try attributes.setting(attribute, to: value)
            }
            return attributes
        }
    }
}
