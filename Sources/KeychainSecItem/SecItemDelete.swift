import Foundation
import KeychainFile

/// Deletes items from the selected keychain, like Apple's `SecItemDelete`.
///
/// `query` selects the items as in `SecItemCopyMatching`, and every match is deleted, as one record; for an
/// identity, its certificate and its private key. `kSecMatchLimitOne` (or a number) is refused, as Apple's
/// keychain refuses it; `kSecMatchLimitAll` is accepted. Return keys and `kSecValueData` are ignored, so the
/// dictionary given to `SecItemAdd` can delete the item again.
///
/// For example:
/// ```swift
/// let status = SecItemDelete([kSecClass as String: kSecClassGenericPassword,
///                             kSecAttrService as String: "com.example.mail"])
/// ```
///
/// - Parameter query: Which items to delete.
/// - Returns: errSecSuccess; errSecItemNotFound when nothing matches; errSecParam for an unknown key, a wrong
///   value type, a missing class or a match limit; errSecNoSuchAttr; errSecMissingEntitlement for an access
///   group that is not the program's; errSecUnimplemented for `kSecValueRef`; errSecNoSuchKeychain when no
///   keychain is selected; or the keychain file's error.
public func SecItemDelete(_ query: [String: Any]) -> OSStatus {
    SecItemCall.status("SecItemDelete") { (selection) throws(SecItemFailure) in
        try SecItemDeleteOperation.run(query, selection: selection)
    }
}

/// The work of `SecItemDelete`.
enum SecItemDeleteOperation {
    static func run(_ dictionary: [String: Any], selection: SecItemKeychain) throws(SecItemFailure) {
        let request = try SecItemDictionary(dictionary)
        if request.hasValueReference {
            throw SecItemFailure(errSecUnimplemented, "kSecValueRef: item objects are not supported")
        }
        guard request.limit == nil || request.limit == .all else {
            throw .parameter("kSecMatchLimit: SecItemDelete deletes every match")
        }
        let keychain = selection.keychain
        var query = try request.query(in: try SecItemSearch.itemClass(of: request, keychain: keychain))
        let queries = try SecItemScope(selection).restrict(&query).queries(from: query)
        try SecItemFailure.library { () throws(KeychainError) in
            try keychain.batch { (batch) throws(KeychainError) in
                var deleted = 0
                for part in queries {
                    do throws(KeychainError) {
                        deleted += try batch.delete(part)
                    } catch {
                        guard error == .itemNotFound else { throw error }
                    }
                }
                guard deleted > 0 else { throw .itemNotFound }
            }
        }
    }
}
