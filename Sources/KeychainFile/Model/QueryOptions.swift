// The vocabulary of a Query: what it searches, how it treats synchronised items, how many matches it
// returns and what it returns for each.

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

/// Which items a query matches by their synchronizable flag, as Apple's `kSecAttrSynchronizable` with
/// `kSecAttrSynchronizableAny`. Apple's default, and this one's, is ``no``.
///
/// For example:
/// ```swift
/// var query = Query.genericPassword(service: "mail")
/// query.synchronizable = .any  // synchronised and local items alike
/// ```
public enum SynchronizableMatch: Sendable, Hashable {
    /// Only items that are not synchronised (absent counts as not synchronised).
    case no
    /// Only items that are synchronised.
    case yes
    /// Items either way.
    case any
}

/// How many matching items a search returns.
///
/// For example:
/// ```swift
/// var query = Query.genericPassword(service: "mail")
/// query.limit = .one
/// ```
public enum MatchLimit: Sendable, Hashable {
    /// The first match.
    case one
    /// Every match.
    case all
}

/// What a search returns for each match.
///
/// For example:
/// ```swift
/// var query = Query.genericPassword(service: "mail", account: "ann")
/// query.returning = [.attributes, .data]
/// ```
public struct ReturnOptions: OptionSet, Sendable, Hashable {
    /// The options as bits: 1 attributes, 2 data, 4 persistent reference.
    public let rawValue: UInt8

    /// Creates options from their bits.
    ///
    /// - Parameter rawValue: The bits of ``rawValue``.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The item's attributes.
    public static let attributes = ReturnOptions(rawValue: 1 << 0)
    /// The item's secret value (decrypted on demand).
    public static let data = ReturnOptions(rawValue: 1 << 1)
    /// A ``PersistentReference`` to the item.
    public static let persistentReference = ReturnOptions(rawValue: 1 << 2)
}
