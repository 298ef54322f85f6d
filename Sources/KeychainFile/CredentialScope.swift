/// What a credential of a keychain reaches: the whole keychain, or only the items of some access groups
/// (Docs/FormatVersion3.md §2.3, format version 3).
///
/// A keychain opened with a credential scoped to groups holds the keys of those groups alone: it finds, adds,
/// updates and deletes their items, and every request outside them — an item of another group, a change that
/// takes the whole keychain — throws ``KeychainError/missingEntitlement(group:operation:)`` (−34018, as Apple's
/// keychain answers a program without the entitlement). Other groups' items are sealed under keys it never holds.
///
/// ```swift
/// try keychain.addCredential(.password("mail app"), scope: .groups(["TEAMID.mail", "TEAMID.shared"]))
/// let mail = try Keychain.open(at: path, credential: .password("mail app"))
/// mail.scope          // .groups(["TEAMID.mail", "TEAMID.shared"])
/// ```
public enum CredentialScope: Sendable, Hashable {
    /// Every item of the keychain, and every change to it.
    case full
    /// The items of these access groups (an item without `accessGroup` is in the default group, the empty name).
    case groups([String])

    /// The access groups reached, or `nil` for the whole keychain.
    public var accessGroups: [String]? {
        switch self {
        case .full: return nil
        case .groups(let groups): return groups
        }
    }

    /// Whether an item of access group `group` (the empty name: the default group) is reached.
    public func contains(group: String) -> Bool {
        accessGroups?.contains(group) ?? true
    }
}
