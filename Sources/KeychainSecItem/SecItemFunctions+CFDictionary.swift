// The SecItem functions taking a `CFDictionary`, so that ported calls such as
// `SecItemAdd(query as CFDictionary, nil)` compile unchanged. On Linux `CFDictionary` is `NSDictionary`
// (CoreFoundationShims.swift); on Apple platforms it is Core Foundation's, bridged the same way.

import Foundation

/// Adds an item, like Apple's `SecItemAdd`, given the attributes as a `CFDictionary` (`query as CFDictionary`).
///
/// For example:
/// ```swift
/// let attributes: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
///                                  kSecAttrAccount as String: "ann", kSecValueData as String: secret]
/// let status = SecItemAdd(attributes as CFDictionary, nil)
/// ```
///
/// - Parameters:
///   - attributes: The item's class, attributes and secret, with `String` keys.
///   - result: Where to store the added item, or `nil`.
/// - Returns: As `SecItemAdd(_:_:)` with a `[String: Any]`; errSecParam when a key is not a string.
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    guard let dictionary = SecItemBridging.dictionary(attributes) else {
        result?.pointee = nil
        return SecItemCall.failed("SecItemAdd", SecItemBridging.nonStringKey("attributes"))
    }
    return SecItemAdd(dictionary, result)
}

/// Finds items, like Apple's `SecItemCopyMatching`, given the query as a `CFDictionary`.
///
/// For example:
/// ```swift
/// var item: CFTypeRef?
/// let status = SecItemCopyMatching(query as CFDictionary, &item)
/// ```
///
/// - Parameters:
///   - query: What to find and what to return, with `String` keys.
///   - result: Where to store what is found; may be `nil` only when no return key is set.
/// - Returns: As `SecItemCopyMatching(_:_:)` with a `[String: Any]`; errSecParam when a key is not a string.
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    guard let dictionary = SecItemBridging.dictionary(query) else {
        result?.pointee = nil
        return SecItemCall.failed("SecItemCopyMatching", SecItemBridging.nonStringKey("query"))
    }
    return SecItemCopyMatching(dictionary, result)
}

/// Changes items, like Apple's `SecItemUpdate`, given both dictionaries as `CFDictionary`.
///
/// For example:
/// ```swift
/// let status = SecItemUpdate(query as CFDictionary, [kSecValueData as String: newSecret] as CFDictionary)
/// ```
///
/// - Parameters:
///   - query: Which items to change, with `String` keys.
///   - attributesToUpdate: The attributes to set and, optionally, the new secret, with `String` keys.
/// - Returns: As `SecItemUpdate(_:_:)` with `[String: Any]`; errSecParam when a key is not a string.
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    guard let dictionary = SecItemBridging.dictionary(query) else {
        return SecItemCall.failed("SecItemUpdate", SecItemBridging.nonStringKey("query"))
    }
    guard let changes = SecItemBridging.dictionary(attributesToUpdate) else {
        return SecItemCall.failed("SecItemUpdate", SecItemBridging.nonStringKey("attributesToUpdate"))
    }
    return SecItemUpdate(dictionary, changes)
}

/// Deletes items, like Apple's `SecItemDelete`, given the query as a `CFDictionary`.
///
/// For example:
/// ```swift
/// let status = SecItemDelete(query as CFDictionary)
/// ```
///
/// - Parameter query: Which items to delete, with `String` keys.
/// - Returns: As `SecItemDelete(_:)` with a `[String: Any]`; errSecParam when a key is not a string.
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    guard let dictionary = SecItemBridging.dictionary(query) else {
        return SecItemCall.failed("SecItemDelete", SecItemBridging.nonStringKey("query"))
    }
    return SecItemDelete(dictionary)
}

/// Turns a `CFDictionary` into the `[String: Any]` the SecItem functions read.
enum SecItemBridging {
    /// The dictionary with `String` keys, or `nil` when a key is not a string.
    static func dictionary(_ dictionary: CFDictionary) -> [String: Any]? {
        (dictionary as NSDictionary) as? [String: Any]
    }

    /// The failure of a dictionary argument, `name`, with a key that is not a string.
    static func nonStringKey(_ name: String) -> SecItemFailure {
        .parameter("\(name): every key must be a string (kSecClass, kSecAttrAccount, …)")
    }
}
