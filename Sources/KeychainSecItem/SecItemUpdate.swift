import Foundation
import KeychainFile

/// Changes items in the selected keychain, like Apple's `SecItemUpdate`.
///
/// `query` selects the items as in `SecItemCopyMatching` (every match is changed; return keys and a match
/// limit other than `kSecMatchLimitAll` are refused, as update returns nothing). `attributesToUpdate` holds
/// the new attribute values and, as `kSecValueData`, a new secret (a certificate's new DER replaces the
/// secret only; its attributes are not read again). All changes are written as one record: all or none.
///
/// For example:
/// ```swift
/// let status = SecItemUpdate(
///     [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.example.mail",
///      kSecAttrAccount as String: "ann"],
///     [kSecValueData as String: Data("n3w s3cret".utf8)])
/// ```
///
/// - Parameters:
///   - query: Which items to change.
///   - attributesToUpdate: The attributes to set and, optionally, the new secret.
/// - Returns: errSecSuccess; errSecItemNotFound when nothing matches; errSecDuplicateItem when a change would
///   give two items the same primary key; errSecParam for an unknown key, a wrong value type, return keys, a
///   match limit, or `kSecClass` among the changes; errSecNoSuchAttr; errSecMissingEntitlement for an access
///   group that is not the program's; errSecUnimplemented for `kSecValueRef`; errSecNoSuchKeychain when no
///   keychain is selected; or the keychain file's error.
public func SecItemUpdate(_ query: [String: Any], _ attributesToUpdate: [String: Any]) -> OSStatus {
    SecItemCall.status("SecItemUpdate") { (selection) throws(SecItemFailure) in
        try SecItemUpdateOperation.run(query, attributesToUpdate, selection: selection)
    }
}

/// The work of `SecItemUpdate`.
enum SecItemUpdateOperation {
    static func run(
        _ queryDictionary: [String: Any], _ changesDictionary: [String: Any], selection: SecItemKeychain
    ) throws(SecItemFailure) {
        let request = try SecItemDictionary(queryDictionary)
        try SecItemCall.rejectReferences(request)
        guard request.returning.isEmpty else { throw .parameter("SecItemUpdate returns nothing: remove the return keys") }
        guard request.limit == nil || request.limit == .all else {
            throw .parameter("kSecMatchLimit: SecItemUpdate changes every match")
        }
        let changes = try SecItemDictionary(changesDictionary)
        guard changes.itemClass == nil, changes.limit == nil, changes.returning.isEmpty, !changes.returnsReference,
              !changes.hasValueReference, changes.persistentReference == nil else {
            throw .parameter("attributesToUpdate may hold only attributes and kSecValueData")
        }
        let keychain = selection.keychain
        let scope = SecItemScope(selection)
        let itemClass = try SecItemSearch.itemClass(of: request, keychain: keychain)
        var query = try request.query(in: itemClass)
        let queries = try scope.restrict(&query).queries(from: query)
        var values = try changes.attributes(in: itemClass)
        switch changes.synchronizable {
        case .flag(let flag)?: values[.synchronizable] = .boolean(flag)
        case .any?: throw .parameter("kSecAttrSynchronizableAny is for queries, not for changes")
        case nil: break
        }
        if case .string(let group)? = values[.accessGroup] { try scope.check(group) }
        let newValues = values
        let secret = changes.valueData
        try SecItemFailure.library { () throws(KeychainError) in
            try keychain.batch { (batch) throws(KeychainError) in
                var changed = 0
                for part in queries {
                    do throws(KeychainError) {
                        changed += try batch.update(part, setting: newValues, secret: secret)
                    } catch {
                        guard error == .itemNotFound else { throw error }
                    }
                }
                guard changed > 0 else { throw .itemNotFound }
            }
        }
    }
}
