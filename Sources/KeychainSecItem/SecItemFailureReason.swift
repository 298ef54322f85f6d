import Foundation

/// Why a SecItem function returned a status other than `errSecSuccess`: which function, the status, and what
/// was wrong in words — the detail a bare `errSecParam` (−50) leaves out, such as the unknown key or the value
/// of the wrong type. Read it from ``SecItemKeychain/lastFailure`` right after the call.
///
/// For example:
/// ```swift
/// let status = SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecValueData as String: "s3cret"], nil)
/// if status != errSecSuccess, let failure = SecItemKeychain.lastFailure {
///     print(failure)   // SecItemAdd: −50, One or more parameters passed to a function were not valid.
///                      // (kSecValueData: expected Data, got a value of type String)
/// }
/// ```
public struct SecItemFailureReason: Sendable, Equatable, CustomStringConvertible {
    /// The function that failed: `"SecItemAdd"`, `"SecItemCopyMatching"`, `"SecItemUpdate"` or `"SecItemDelete"`.
    public let function: String
    /// The status it returned.
    public let status: OSStatus
    /// What was wrong, naming the key or the keychain's error: `"kSecValueData: expected Data, got a value of type String"`.
    public let reason: String

    /// - Parameters:
    ///   - function: The SecItem function.
    ///   - status: The status it returned.
    ///   - reason: What was wrong.
    public init(function: String, status: OSStatus, reason: String) {
        self.function = function
        self.status = status
        self.reason = reason
    }

    /// The function, the status with its `SecCopyErrorMessageString` sentence, and the reason.
    public var description: String {
        "\(function): \(status), \(SecCopyErrorMessageString(status, nil) ?? "OSStatus \(status)") (\(reason))"
    }
}
