/// The classes a ``Query`` can search: the four stored classes, and identities (certificates paired with
/// their private keys).
///
/// For example:
/// ```swift
/// let identities = Query(.identity)
/// assert(QueryClass.certificate.itemClass == .certificate)
/// ```
public enum QueryClass: Sendable, Hashable, CustomStringConvertible {
    /// Generic passwords.
    case genericPassword
    /// Internet passwords.
    case internetPassword
    /// Certificates.
    case certificate
    /// Keys.
    case key
    /// Identities: a certificate and a private key whose application label is its public key hash.
    case identity

    /// The class's name in messages, such as "generic password" or "identity".
    public var description: String {
        itemClass.map { "\($0)" } ?? "identity"
    }

    /// The stored class searched, or `nil` for identities, which span two.
    public var itemClass: ItemClass? {
        switch self {
        case .genericPassword: return .genericPassword
        case .internetPassword: return .internetPassword
        case .certificate: return .certificate
        case .key: return .key
        case .identity: return nil
        }
    }
}
