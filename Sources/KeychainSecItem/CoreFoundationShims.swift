// Core Foundation names that ported SecItem code uses, for platforms without Core Foundation's Swift overlay
// (Linux, Windows). On Apple platforms the system's own types are used and nothing here is compiled, so the
// module never shadows CoreFoundation there.

import Foundation

#if !canImport(Darwin)
/// A result code, as Apple's `OSStatus`: `errSecSuccess` (0) or a negative error code.
///
/// For example:
/// ```swift
/// let status: OSStatus = SecItemDelete([kSecClass as String: kSecClassGenericPassword])
/// if status != errSecSuccess { print(SecCopyErrorMessageString(status, nil) ?? "") }
/// ```
public typealias OSStatus = Int32

/// Any object, as Apple's `CFTypeRef`: the type of the value `SecItemCopyMatching` and `SecItemAdd` return
/// through their result pointer (`Data`, `NSDictionary`, `NSArray`).
///
/// For example:
/// ```swift
/// var item: CFTypeRef?
/// let status = SecItemCopyMatching(query as CFDictionary, &item)
/// let password = item as? Data
/// ```
public typealias CFTypeRef = AnyObject

/// A dictionary, as Apple's `CFDictionary`: `NSDictionary`, so that ported `query as CFDictionary`
/// compiles and calls the SecItem functions' `CFDictionary` overloads.
///
/// For example:
/// ```swift
/// let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword]
/// let status = SecItemDelete(query as CFDictionary)
/// ```
public typealias CFDictionary = NSDictionary

/// A string, as Apple's `CFString`: Swift's `String`, so that `[CFString: Any]` queries and
/// `kSecClass as CFString` compile unchanged.
///
/// For example:
/// ```swift
/// let query: [CFString: Any] = [kSecClass: kSecClassGenericPassword, kSecAttrService: "mail"]
/// let status = SecItemDelete(query as CFDictionary)
/// ```
public typealias CFString = String

/// A Boolean, as Apple's `CFBoolean`: Swift's `Bool`.
///
/// For example:
/// ```swift
/// let query: [String: Any] = [kSecReturnData as String: kCFBooleanTrue!]
/// ```
public typealias CFBoolean = Bool

/// `true`, as Apple's `kCFBooleanTrue` (implicitly unwrapped, as Apple declares it).
public let kCFBooleanTrue: CFBoolean! = true

/// `false`, as Apple's `kCFBooleanFalse` (implicitly unwrapped, as Apple declares it).
public let kCFBooleanFalse: CFBoolean! = false
#endif
