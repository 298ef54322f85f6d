@testable import KeychainFile

/// What a credential scoped to access groups promises (Docs/FormatVersion3.md §2.3), whatever the bytes: a keychain
/// it opens reaches no group it was not given, holds no item of another group, refuses a request for another group
/// with `missingEntitlement` (never an empty answer), and — when the full credential opens the same bytes — holds
/// exactly the full holder's items of its groups, with the same attributes and secrets.
enum ScopeChecks {
    static func run(_ bytes: [UInt8], passwords: Bool) {
        var fullStore = FuzzStore(bytes)
        let full = try? fullStore.open(with: FuzzCredentials.key)
        if let full {
            Invariant.check(full.scope == .full, "the full key opened with scope \(full.scope)")
        }
        let fullItems = full.map { KeychainContents(of: $0, FormatV3Checks.self).items }
        for known in V3Credentials.all where known.groups != nil && (passwords || !known.isPassword) {
            guard let given = known.groups else { continue }
            var store = FuzzStore(bytes)
            guard let scoped = try? store.open(with: known.credential) else { continue }
            let reached: Set<String>
            switch scoped.scope {
            case .full:
                Invariant.check(false, "the \(known.name), given \(given.sorted()), opened the whole keychain")
                return
            case .groups(let groups):
                reached = Set(groups)
                Invariant.check(reached.isSubset(of: given), "the \(known.name), given \(given.sorted()), reaches \(groups)")
            }
            let items = KeychainContents(of: scoped, FormatV3Checks.self).items
            for item in items {
                let group = accessGroup(of: item)
                Invariant.check(reached.contains(group), "the \(known.name) holds item \(item.id) of group \"\(group)\" outside its scope")
            }
            checkRefusesOtherGroups(scoped, name: known.name, reached: reached)
            guard let fullItems else { continue }
            let expected = fullItems.filter { reached.contains(accessGroup(of: $0)) }
            let sameItems = Set(items.map(\.id)) == Set(expected.map(\.id))
                && items.allSatisfy { item in expected.contains { $0 == item } }
            Invariant.check(
                sameItems,
                "the \(known.name) holds \(items.count) items; the full key holds \(expected.count) of its groups, or other values")
        }
    }

    /// The access group an item is in: the default group (the empty name) when it has none.
    static func accessGroup(of item: KeychainContents.Item) -> String {
        if case .string(let group)? = item.attributes[.accessGroup] { return group }
        return ""
    }

    /// A search naming a group outside the scope throws `missingEntitlement`: an empty answer would say the group
    /// has no items.
    static func checkRefusesOtherGroups(_ keychain: Keychain, name: String, reached: Set<String>) {
        for group in V3Credentials.groups where !reached.contains(group) {
            do {
                _ = try keychain.search(
                    Query(.genericPassword, attributes: [.accessGroup: .string(group)], synchronizable: .any), returning: [.data])
                Invariant.check(false, "the \(name) searched group \"\(group)\" outside its scope and was answered")
            } catch .missingEntitlement {
            } catch {
                Invariant.check(false, "the \(name) searching group \"\(group)\" outside its scope threw \(error), not missingEntitlement")
            }
        }
    }
}
