import Foundation

/// Returns a sentence describing a result code, like Apple's `SecCopyErrorMessageString`.
///
/// The sentences for Apple's codes are those of Apple's `SecBase.h`; a code this module does not know is
/// described as `"OSStatus <code>"`.
///
/// For example:
/// ```swift
/// let status = SecItemAdd(attributes, nil)
/// if status != errSecSuccess {
///     print(SecCopyErrorMessageString(status, nil) ?? "unknown error")
///     // "The specified item already exists in the keychain."
/// }
/// ```
///
/// - Parameters:
///   - status: A result code returned by a SecItem function.
///   - reserved: Unused; pass `nil`, as with Apple's function.
/// - Returns: The description; never `nil` (the return type is optional only to match Apple's).
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> String? {
    SecItemStatusText.messages[status] ?? "OSStatus \(status)"
}

/// The sentences of `SecCopyErrorMessageString`.
enum SecItemStatusText {
    /// Apple's sentence for each code this module uses (from the comments of `SecBase.h`, which Apple
    /// turns into its error strings).
    static let messages: [OSStatus: String] = [
        errSecSuccess: "No error.",
        errSecUnimplemented: "Function or operation not implemented.",
        errSecIO: "I/O error.",
        errSecParam: "One or more parameters passed to a function were not valid.",
        errSecAllocate: "Failed to allocate memory.",
        errSecAuthFailed: "The user name or passphrase you entered is not correct.",
        errSecNoSuchKeychain: "The specified keychain could not be found.",
        errSecDuplicateItem: "The specified item already exists in the keychain.",
        errSecItemNotFound: "The specified item could not be found in the keychain.",
        errSecNoSuchAttr: "The specified attribute does not exist.",
        errSecNoSuchClass: "The specified item does not appear to be a valid keychain item.",
        errSecInteractionNotAllowed: "User interaction is not allowed.",
        errSecDecode: "Unable to decode the provided data.",
        errSecMissingEntitlement: "A required entitlement isn't present.",
        errSecVerifyFailed: "A cryptographic verification failure has occurred.",
    ]
}
