/// The access groups a version 3 log reaches (Docs/FormatVersion3.md §2.11): each group's key id, name and record
/// keys — every group of the key table a full credential opens, or the groups of a scoped credential's grant.
///
/// An item's group is its `accessGroup` attribute; an item without one, or with the empty string, is in the
/// default group (the empty name).
///
/// ```swift
/// let groups = try AccessGroupsV3(table: keyTable, fileID: header.fileID)
/// let keys = groups.keys(named: AccessGroupsV3.name(of: item.attributes))   // nil: a group the table lacks
/// ```
struct AccessGroupsV3: Sendable {
    /// The key table, for a full holder; `nil` for a scoped one, which reaches only the groups of its grant.
    let table: KeyTableV3?
    /// Each group's record keys, by key id.
    let byKeyID: [UInt8: GroupKeysV3]
    /// Each group's name, by key id.
    let names: [UInt8: String]
    private let keyIDs: [String: UInt8]

    /// Every group of a full holder's key table.
    ///
    /// - Throws: `.invalidParameter` when a group key cannot be derived (``GroupKeysV3``).
    init(table: KeyTableV3, fileID: [UInt8]) throws(KeychainError) {
        try self.init(groups: table.groups, table: table, fileID: fileID)
    }

    /// The groups a scoped credential's grant gives.
    init(scope groups: [KeySetV3.Group], fileID: [UInt8]) throws(KeychainError) {
        try self.init(groups: groups, table: nil, fileID: fileID)
    }

    /// The groups reached, in increasing key id: a scoped holder's grant, or the table's.
    let scopeGroups: [KeySetV3.Group]

    /// Whether these are a scoped holder's groups: other groups' segments are kept as their bytes, not refused.
    var isScoped: Bool { table == nil }

    private init(groups: [KeySetV3.Group], table: KeyTableV3?, fileID: [UInt8]) throws(KeychainError) {
        self.table = table
        scopeGroups = groups.sorted { $0.keyID < $1.keyID }
        var byKeyID: [UInt8: GroupKeysV3] = [:]
        var names: [UInt8: String] = [:]
        var keyIDs: [String: UInt8] = [:]
        for group in groups {
            byKeyID[group.keyID] = try GroupKeysV3(groupKey: group.key, fileID: fileID, keyID: group.keyID)
            names[group.keyID] = group.name
            keyIDs[group.name] = group.keyID
        }
        self.byKeyID = byKeyID
        self.names = names
        self.keyIDs = keyIDs
    }

    /// The name of the group an item with `attributes` belongs to.
    static func name(of attributes: ItemAttributes) -> String {
        attributes.string(.accessGroup) ?? KeyTableV3.defaultGroupName
    }

    /// The key id of the group named `name`, if the table has it.
    func keyID(named name: String) -> UInt8? { keyIDs[name] }

    /// The key id of the group of an item with `attributes`.
    ///
    /// - Throws: `.invalidParameter` when the table has no such group (a writer adds it first).
    func keyID(of attributes: ItemAttributes) throws(KeychainError) -> UInt8 {
        let name = Self.name(of: attributes)
        guard let keyID = keyIDs[name] else {
            throw .invalidParameter("internal error: the access group \"\(name)\" is not in this keychain's key table")
        }
        return keyID
    }

    /// The record keys of the group of an item with `attributes`.
    func keys(of attributes: ItemAttributes) throws(KeychainError) -> GroupKeysV3 {
        let keyID = try keyID(of: attributes)
        guard let keys = byKeyID[keyID] else { throw .invalidParameter("internal error: no keys for key id \(keyID)") }
        return keys
    }

    /// The groups named by `names` that the table lacks, each once, in the order first named.
    func missing<Names: Sequence<String>>(_ names: Names) -> [String] {
        var missing: [String] = []
        for name in names where keyIDs[name] == nil && !missing.contains(name) { missing.append(name) }
        return missing
    }
}
