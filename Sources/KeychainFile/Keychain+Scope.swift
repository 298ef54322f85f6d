/// What the credential a keychain was opened with reaches (``CredentialScope``), and the checks that refuse
/// what lies outside it before anything is read or written.
extension Keychain {
    /// What the credential this keychain was opened with reaches: ``CredentialScope/full`` for every credential
    /// of format versions 1 and 2, and for a version 3 credential added without a scope.
    ///
    /// For example:
    /// ```swift
    /// if case .groups(let groups) = keychain.scope { print("reaches only", groups) }
    /// ```
    public var scope: CredentialScope {
        withLock { log.accessScope.map(CredentialScope.groups) ?? .full }
    }

    /// Refuses a query that names an access group outside `scope` (`nil`: the whole keychain): a scoped holder
    /// asking for another group's items gets `missingEntitlement`, never an empty answer that would say the
    /// group has none.
    static func checkScope(_ query: Query, within scope: [String]?, operation: String) throws(KeychainError) {
        guard let scope, case .string(let group)? = query.attributes[.accessGroup], !scope.contains(group) else { return }
        throw .missingEntitlement(group: group, operation: operation)
    }

    /// Refuses an item, or attribute changes, whose access group lies outside `scope` (`nil`: the whole keychain).
    static func checkScope(group: String, within scope: [String]?, operation: String) throws(KeychainError) {
        guard let scope, !scope.contains(group) else { return }
        throw .missingEntitlement(group: group, operation: operation)
    }
}
