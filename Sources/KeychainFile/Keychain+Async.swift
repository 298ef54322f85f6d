/// The first `async` calls, overloads of the blocking ones with the same names. Swift chooses between the two
/// by context, and in top-level code (and wherever it prefers the synchronous overload) `try await` ran the
/// blocking call with only a warning. ``AsyncKeychain`` replaces them: `try await keychain.async.add(item)`.
/// They are left out of the documentation, where they made every link to the blocking calls ambiguous.
extension Keychain {
    /// Opens a keychain without blocking the caller's thread.
    @_documentation(visibility: internal)
    @available(*, deprecated, message: "use AsyncKeychain.open(at:credential:options:), whose every call is async")
    public static func open(
        at path: String, credential: Credential, options: OpenOptions = OpenOptions()
    ) async throws(KeychainError) -> Keychain {
        try await AsyncKeychain.open(at: path, credential: credential, options: options).keychain
    }

    /// ``batch(_:)-(_)`` without blocking the caller's thread; `body` runs on another thread.
    @_documentation(visibility: internal)
    @available(*, deprecated, message: "use keychain.async.batch(_:), which is never mistaken for the blocking call")
    public func batch<Result: Sendable>(
        _ body: @escaping @Sendable (inout Batch) throws(KeychainError) -> Result
    ) async throws(KeychainError) -> Result {
        try await self.async.batch(body)
    }

    /// ``add(_:)-(Item)`` without blocking the caller's thread.
    @_documentation(visibility: internal)
    @available(*, deprecated, message: "use keychain.async.add(_:), which is never mistaken for the blocking call")
    @discardableResult
    public func add<Item: KeychainItem>(_ item: Item) async throws(KeychainError) -> PersistentReference {
        try await self.async.add(item)
    }

    /// ``update(_:setting:secret:)`` without blocking the caller's thread.
    @_documentation(visibility: internal)
    @available(*, deprecated, message: "use keychain.async.update(_:setting:secret:), which is never mistaken for the blocking call")
    @discardableResult
    public func update(
        _ query: Query, setting changes: [Attribute: AttributeValue], secret: [UInt8]? = nil
    ) async throws(KeychainError) -> Int {
        try await self.async.update(query, setting: changes, secret: secret)
    }

    /// ``delete(_:)`` without blocking the caller's thread.
    @_documentation(visibility: internal)
    @available(*, deprecated, message: "use keychain.async.delete(_:), which is never mistaken for the blocking call")
    @discardableResult
    public func delete(_ query: Query) async throws(KeychainError) -> Int {
        try await self.async.delete(query)
    }

    /// ``search(_:returning:)`` without blocking the caller's thread.
    @_documentation(visibility: internal)
    @available(*, deprecated, message: "use keychain.async.search(_:returning:), which is never mistaken for the blocking call")
    public func search(_ query: Query, returning: ReturnOptions? = nil) async throws(KeychainError) -> [SearchResult] {
        try await self.async.search(query, returning: returning)
    }

    /// ``find(_:matching:loadingValues:)`` without blocking the caller's thread.
    @_documentation(visibility: internal)
    @available(*, deprecated, message: "use keychain.async.find(_:matching:loadingValues:), which is never mistaken for the blocking call")
    public func find<Item: KeychainItem>(
        _ type: Item.Type, matching query: Query, loadingValues: Bool = true
    ) async throws(KeychainError) -> [Item] {
        try await self.async.find(type, matching: query, loadingValues: loadingValues)
    }

    /// ``password(forService:account:)`` without blocking the caller's thread.
    @_documentation(visibility: internal)
    @available(*, deprecated, message: "use keychain.async.password(forService:account:), which is never mistaken for the blocking call")
    public func password(forService service: String, account: String) async throws(KeychainError) -> String {
        try await self.async.password(forService: service, account: account)
    }

    /// ``setPassword(_:forService:account:)`` without blocking the caller's thread.
    @_documentation(visibility: internal)
    @available(*, deprecated, message: "use keychain.async.setPassword(_:forService:account:), which is never mistaken for the blocking call")
    public func setPassword(_ password: String, forService service: String, account: String) async throws(KeychainError) {
        try await self.async.setPassword(password, forService: service, account: account)
    }

    /// ``compact()`` without blocking the caller's thread.
    @_documentation(visibility: internal)
    @available(*, deprecated, message: "use keychain.async.compact(), which is never mistaken for the blocking call")
    @discardableResult
    public func compact() async throws(KeychainError) -> CompactionResult {
        try await self.async.compact()
    }
}
