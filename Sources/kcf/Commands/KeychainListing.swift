import KeychainFile

/// Searches that list items rather than look one up: "none" is an empty list, not an error.
enum KeychainListing {
    /// The stored classes in the order they are listed.
    static let classes: [(query: QueryClass, item: ItemClass)] = [
        (.genericPassword, .genericPassword), (.internetPassword, .internetPassword),
        (.certificate, .certificate), (.key, .key),
    ]

    /// Every item of `queryClass`, synchronised or not, in the order added; empty when there is none.
    static func all(
        _ queryClass: QueryClass, in keychain: Keychain, returning: ReturnOptions
    ) throws(CommandError) -> [SearchResult] {
        try keychainCall { () throws(KeychainError) -> [SearchResult] in
            do throws(KeychainError) {
                return try keychain.search(Query(queryClass, synchronizable: .any), returning: returning)
            } catch {
                guard error == .itemNotFound else { throw error }
                return []
            }
        }
    }
}
