/// The class of a stored keychain item, with the codes of SPEC.md §8.1.
///
/// The class decides which attributes an item may carry (``Attribute/isAllowed(in:)``) and which of them
/// form its primary key (``Attribute/primaryKey(of:)``). Identities are not a stored class: an identity is
/// a certificate and a private key that belong together (see ``Identity``).
///
/// For example:
/// ```swift
/// let attributes = try ItemAttributes(itemClass: .genericPassword, values: [.service: .string("mail")])
/// ```
public enum ItemClass: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// A password for an application or service (Apple's `kSecClassGenericPassword`).
    case genericPassword = 1
    /// A password for an internet server (Apple's `kSecClassInternetPassword`).
    case internetPassword = 2
    /// An X.509 certificate (Apple's `kSecClassCertificate`).
    case certificate = 3
    /// A cryptographic key (Apple's `kSecClassKey`).
    case key = 4

    /// The class's name as it appears in error messages, such as "generic password".
    public var description: String {
        switch self {
        case .genericPassword: return "generic password"
        case .internetPassword: return "internet password"
        case .certificate: return "certificate"
        case .key: return "key"
        }
    }
}
