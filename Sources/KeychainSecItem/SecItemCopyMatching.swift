import Foundation
import KeychainFile

/// Finds items in the selected keychain, like Apple's `SecItemCopyMatching`.
///
/// `query` holds `kSecClass` (or a `kSecValuePersistentRef`, whose item's class is then used), attributes
/// every match must have, `kSecAttrSynchronizable` (absent: only items that are not synchronised;
/// `kSecAttrSynchronizableAny`: both), `kSecMatchLimit` (default `kSecMatchLimitOne`) and return keys.
/// Without `kSecAttrAccessGroup` only items of the program's access groups match (see ``SecItemKeychain``).
/// `kSecValueData` in a query is ignored, as Apple's keychain ignores it.
///
/// The result follows Apple's rules: with `kSecMatchLimitOne` one object, otherwise an array of them; each
/// is the secret as `Data` when only `kSecReturnData` is set, the persistent reference as `Data` when only
/// `kSecReturnPersistentRef` is set, and otherwise a dictionary with `kSecClass`, the attributes (with
/// `kSecReturnAttributes`), `kSecValueData` and `kSecValuePersistentRef`. An identity's data is its
/// certificate's DER, its attributes its certificate's plus its private key's key attributes, its persistent
/// reference its certificate's. Without return keys nothing is returned (an existence check).
///
/// For example:
/// ```swift
/// var item: CFTypeRef?
/// let status = SecItemCopyMatching([
///     kSecClass as String: kSecClassGenericPassword,
///     kSecAttrService as String: "com.example.mail",
///     kSecAttrAccount as String: "ann",
///     kSecReturnData as String: true,
///     kSecMatchLimit as String: kSecMatchLimitOne,
/// ], &item)
/// let password = (item as? Data).map { String(decoding: $0, as: UTF8.self) }
/// ```
///
/// - Parameters:
///   - query: What to find and what to return.
///   - result: Where to store what is found; may be `nil` only when no return key is set.
/// - Returns: errSecSuccess; errSecItemNotFound when nothing matches; errSecParam for an unknown key, a wrong
///   value type, a missing class, or return keys with a `nil` result; errSecNoSuchAttr; errSecNoSuchClass;
///   errSecMissingEntitlement for an access group that is not the program's; errSecUnimplemented for
///   `kSecValueRef` and `kSecReturnRef`; errSecNoSuchKeychain when no keychain is selected; or the keychain
///   file's error.
public func SecItemCopyMatching(_ query: [String: Any], _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemCall.status("SecItemCopyMatching", clearing: result) { (selection) throws(SecItemFailure) in
        try SecItemCopyMatchingOperation.run(query, result: result, selection: selection)
    }
}

/// The work of `SecItemCopyMatching`.
enum SecItemCopyMatchingOperation {
    static func run(
        _ dictionary: [String: Any], result: UnsafeMutablePointer<CFTypeRef?>?, selection: SecItemKeychain
    ) throws(SecItemFailure) {
        let request = try SecItemDictionary(dictionary)
        try SecItemCall.rejectReferences(request)
        guard result != nil || request.returning.isEmpty else {
            throw .parameter("a return key is set but the result pointer is nil")
        }
        let keychain = selection.keychain
        var query = try request.query(in: try SecItemSearch.itemClass(of: request, keychain: keychain))
        let visibility = try SecItemScope(selection).restrict(&query)
        let limit = request.limit ?? .one
        let found = try SecItemSearch.run(
            query, returning: request.returning, limit: limit, visibility: visibility, keychain: keychain)
        guard let result, !request.returning.isEmpty else { return }
        if limit == .one {
            result.pointee = SecItemResultShape.object(for: found[0], returning: request.returning)
        } else {
            result.pointee = SecItemResultShape.array(for: found, returning: request.returning)
        }
    }
}
