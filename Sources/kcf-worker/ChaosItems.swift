import KeychainFile

/// The items `chaos` writes.
enum ChaosItems {
    static let service = "chaos"

    static func query(_ account: String) -> Query { .genericPassword(service: service, account: account) }

    /// Every chaos item's account, read from the keychain (attributes only).
    static func accounts(in keychain: Keychain) throws(KeychainError) -> [String] {
        do throws(KeychainError) {
            return try keychain.find(GenericPassword.self, matching: .genericPassword(service: service), loadingValues: false)
                .map(\.account)
        } catch {
            if case .itemNotFound = error { return [] }
            throw error
        }
    }
}
