import KeychainFile

/// Searches for SecItemCopyMatching and SecItemAdd: the KeychainFile search, restricted to the visible access
/// groups and cut to the match limit.
enum SecItemSearch {
    /// Finds what a query matches.
    ///
    /// With several visible access groups every match is read with its attributes (and, when asked for, its
    /// secret) in one search, so that the result is consistent; the invisible ones are then dropped.
    ///
    /// - Returns: One result for `.one`, at most `n` for `.count(n)`, never none.
    /// - Throws: errSecItemNotFound when nothing visible matches; the library's failures.
    static func run(
        _ query: Query, returning: ReturnOptions, limit: SecItemDictionary.Limit,
        visibility: SecItemScope.Visibility, keychain: Keychain
    ) throws(SecItemFailure) -> [SearchResult] {
        var query = query
        var wanted = returning
        let maximum: Int?
        switch limit {
        case .one: maximum = 1
        case .all: maximum = nil
        case .count(let count): maximum = count
        }
        if case .groups = visibility {
            query.limit = .all
            wanted.insert(.attributes)
        } else {
            query.limit = maximum == 1 ? .one : .all
        }
        let searched = query
        let options = wanted
        let results = try SecItemFailure.library { () throws(KeychainError) in
            try keychain.search(searched, returning: options)
        }
        let visible = results.filter { visibility.contains($0.attributes) }
        guard !visible.isEmpty else { throw SecItemFailure(errSecItemNotFound, "no visible item matches") }
        return maximum.map { Array(visible.prefix($0)) } ?? visible
    }

    /// The class of the item a persistent reference names, for a query that gives no `kSecClass` (the
    /// reference itself does not record the class).
    ///
    /// - Throws: errSecItemNotFound when no item has the reference.
    static func itemClass(of reference: PersistentReference, keychain: Keychain) throws(SecItemFailure) -> QueryClass {
        for candidate in SecItemClasses.stored {
            let query = Query(candidate, synchronizable: .any, persistentReference: reference, limit: .one, returning: [])
            do throws(KeychainError) {
                _ = try keychain.search(query)
                return candidate
            } catch {
                guard error == .itemNotFound else { throw SecItemFailure(error) }
            }
        }
        throw SecItemFailure(errSecItemNotFound, "no item has this persistent reference")
    }

    /// The class a dictionary searches: its `kSecClass`, else the class of its persistent reference.
    ///
    /// - Throws: errSecParam when it gives neither; errSecItemNotFound when the reference names no item.
    static func itemClass(of request: SecItemDictionary, keychain: Keychain) throws(SecItemFailure) -> QueryClass {
        if let itemClass = request.itemClass { return itemClass }
        guard let reference = request.persistentReference else {
            throw .parameter("kSecClass is missing (it may be left out only with kSecValuePersistentRef)")
        }
        return try itemClass(of: reference, keychain: keychain)
    }
}
