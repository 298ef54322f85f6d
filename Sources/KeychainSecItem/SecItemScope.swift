import KeychainFile

/// The access groups a call may use (``SecItemKeychain/accessGroups``), applied to adds and queries the way
/// Apple's keychain applies a program's keychain-access-groups entitlement.
struct SecItemScope {
    /// Which items of a query's matches the caller may see.
    enum Visibility {
        /// Every match: the query itself names the one visible access group, or nothing is restricted.
        case asQueried
        /// Only matches in these access groups (the query names none).
        case groups([String])

        /// The queries that together find what is visible: the query itself, or one per access group.
        func queries(from query: Query) -> [Query] {
            switch self {
            case .asQueried:
                return [query]
            case .groups(let groups):
                return groups.map { group in
                    var restricted = query
                    restricted.attributes[.accessGroup] = .string(group)
                    return restricted
                }
            }
        }

        /// Whether an item with these attributes is visible; `nil` attributes count as visible.
        func contains(_ attributes: ItemAttributes?) -> Bool {
            guard case .groups(let groups) = self, let attributes else { return true }
            guard case .string(let group)? = attributes[.accessGroup] else { return groups.contains("") }
            return groups.contains(group)
        }
    }

    /// The program's access groups; `nil` for no restriction.
    let groups: [String]?

    /// The selection's access groups, or else, for a keychain opened with a credential scoped to access groups,
    /// those groups (the first the default for new items).
    init(_ selection: SecItemKeychain) {
        groups = selection.accessGroups ?? selection.keychain.scope.accessGroups
    }

    /// Checks that the program may use `group`.
    ///
    /// - Throws: errSecMissingEntitlement when it is not one of the program's access groups.
    func check(_ group: String) throws(SecItemFailure) {
        guard let groups else { return }
        guard groups.contains(group) else {
            throw SecItemFailure(errSecMissingEntitlement, "kSecAttrAccessGroup: \"\(group)\" is not one of the program's access groups")
        }
    }

    /// Gives attributes for a new item an access group: checks the one given, or sets the program's default
    /// (its first access group). Without restriction, an absent group stays absent (the empty group).
    ///
    /// - Throws: errSecMissingEntitlement when the group given is not the program's, or the program has none.
    func assignGroup(to values: inout [Attribute: AttributeValue]) throws(SecItemFailure) {
        guard let groups else { return }
        if case .string(let group)? = values[.accessGroup] {
            try check(group)
        } else if let first = groups.first {
            values[.accessGroup] = .string(first)
        } else {
            throw SecItemFailure(errSecMissingEntitlement, "the program has no access group")
        }
    }

    /// Restricts a query to what the program may see: checks a group the query names, names the program's
    /// only group when it has one, or says which groups to keep.
    ///
    /// - Throws: errSecMissingEntitlement when the query names a group that is not the program's, or the
    ///   program has none.
    func restrict(_ query: inout Query) throws(SecItemFailure) -> Visibility {
        guard let groups else { return .asQueried }
        if case .string(let group)? = query.attributes[.accessGroup] {
            try check(group)
            return .asQueried
        }
        switch groups.count {
        case 0:
            throw SecItemFailure(errSecMissingEntitlement, "the program has no access group")
        case 1:
            query.attributes[.accessGroup] = .string(groups[0])
            return .asQueried
        default:
            return .groups(groups)
        }
    }
}
