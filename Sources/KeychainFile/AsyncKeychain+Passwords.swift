/// One secret per service and account, from `async` code: the calls of `Keychain+Passwords`.
extension AsyncKeychain {
    /// ``Keychain/password(forService:account:)`` without blocking the caller.
    ///
    /// For example:
    /// ```swift
    /// let password = try await keychain.async.password(forService: "mail.example.com", account: "ann")
    /// ```
    ///
    /// - Throws: `KeychainError.itemNotFound` if there is none; what ``Keychain/password(forService:account:)``
    ///   throws.
    public func password(forService service: String, account: String) async throws(KeychainError) -> String {
        try await offload { (keychain) throws(KeychainError) in try keychain.password(forService: service, account: account) }
    }

    /// ``Keychain/setPassword(_:forService:account:)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/setPassword(_:forService:account:)`` throws.
    public func setPassword(_ password: String, forService service: String, account: String) async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in try keychain.setPassword(password, forService: service, account: account) }
    }

    /// ``Keychain/data(forService:account:)`` without blocking the caller.
    ///
    /// - Throws: `KeychainError.itemNotFound` if there is none.
    public func data(forService service: String, account: String) async throws(KeychainError) -> [UInt8] {
        try await offload { (keychain) throws(KeychainError) in try keychain.data(forService: service, account: account) }
    }

    /// ``Keychain/setData(_:forService:account:)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/setData(_:forService:account:)`` throws.
    public func setData(_ data: [UInt8], forService service: String, account: String) async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in try keychain.setData(data, forService: service, account: account) }
    }

    /// ``Keychain/setValue(_:forService:account:)`` without blocking the caller; `value` is encoded on the
    /// caller's task.
    ///
    /// - Throws: What ``Keychain/setValue(_:forService:account:)`` throws.
    public func setValue<Value: Encodable>(_ value: Value, forService service: String, account: String) async throws(KeychainError) {
        try await setData(try Keychain.encodeJSON(value), forService: service, account: account)
    }

    /// ``Keychain/value(_:forService:account:)`` without blocking the caller; the value is decoded on the
    /// caller's task.
    ///
    /// - Throws: What ``Keychain/value(_:forService:account:)`` throws.
    public func value<Value: Decodable>(_ type: Value.Type, forService service: String, account: String) async throws(KeychainError) -> Value {
        try Keychain.decodeJSON(type, from: try await data(forService: service, account: account), service: service, account: account)
    }

    /// ``Keychain/removePassword(forService:account:)`` without blocking the caller.
    ///
    /// - Throws: `KeychainError.itemNotFound` if there is none.
    public func removePassword(forService service: String, account: String) async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in try keychain.removePassword(forService: service, account: account) }
    }

    /// ``Keychain/accounts(forService:)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/accounts(forService:)`` throws.
    public func accounts(forService service: String) async throws(KeychainError) -> [String] {
        try await offload { (keychain) throws(KeychainError) in try keychain.accounts(forService: service) }
    }
}
