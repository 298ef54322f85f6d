import KeychainFile

/// The items workers write: generic passwords of service "worker" whose secret starts with
/// "secret-ACCOUNT", so that a reader can check that a secret belongs to its item.
enum WorkerItems {
    static let service = "worker"

    static func account(prefix: String, index: Int) -> String { "\(prefix)-\(index)" }

    /// The secret an add writes.
    static func secret(account: String) -> [UInt8] { Array("secret-\(account)".utf8) }

    /// The secret the `version`th update writes.
    static func secret(account: String, version: Int) -> [UInt8] { Array("secret-\(account)-v\(version)".utf8) }

    /// Whether `value` is a secret written for `account`, by an add or an update.
    static func isSecret(_ value: [UInt8]?, of account: String) -> Bool {
        guard let value else { return false }
        let text = String(decoding: value, as: UTF8.self)
        let base = "secret-\(account)"
        return text == base || text.hasPrefix(base + "-v")
    }

    /// Every worker item, attributes only.
    static func all(in keychain: Keychain) throws -> [GenericPassword] {
        do {
            return try keychain.find(GenericPassword.self, matching: .genericPassword(service: service), loadingValues: false)
        } catch .itemNotFound {
            return []
        }
    }
}
