/// Items, queries and batches from `async` code: the calls of `Keychain` and `Keychain+TypedItems`.
extension AsyncKeychain {
    /// ``Keychain/add(_:)-(Item)`` without blocking the caller.
    ///
    /// For example:
    /// ```swift
    /// try await keychain.async.add(GenericPassword(service: "mail.example.com", account: "ann", password: "s3cret"))
    /// ```
    ///
    /// - Throws: `KeychainError.duplicateItem`; what ``Keychain/add(_:)-(Item)`` throws.
    @discardableResult
    public func add<Item: KeychainItem>(_ item: Item) async throws(KeychainError) -> PersistentReference {
        try await offload { (keychain) throws(KeychainError) in try keychain.add(item) }
    }

    /// ``Keychain/add(_:)-(Identity)`` without blocking the caller.
    ///
    /// - Throws: `KeychainError.duplicateItem` if the certificate or the key exists.
    @discardableResult
    public func add(_ identity: Identity) async throws(KeychainError) -> (certificate: PersistentReference, privateKey: PersistentReference) {
        let references = try await offload { (keychain) throws(KeychainError) in
            let added = try keychain.add(identity)
            return [added.certificate, added.privateKey]
        }
        return (references[0], references[1])
    }

    /// ``Keychain/add(_:secret:)`` without blocking the caller.
    ///
    /// - Throws: `KeychainError.duplicateItem`; what ``Keychain/add(_:secret:)`` throws.
    @discardableResult
    public func add(_ attributes: ItemAttributes, secret: [UInt8]) async throws(KeychainError) -> PersistentReference {
        try await offload { (keychain) throws(KeychainError) in try keychain.add(attributes, secret: secret) }
    }

    /// ``Keychain/update(_:setting:secret:)`` without blocking the caller.
    ///
    /// - Returns: How many items changed.
    /// - Throws: `KeychainError.itemNotFound` if nothing matches; `.duplicateItem`.
    @discardableResult
    public func update(
        _ query: Query, setting changes: [Attribute: AttributeValue], secret: [UInt8]? = nil
    ) async throws(KeychainError) -> Int {
        try await offload { (keychain) throws(KeychainError) in try keychain.update(query, setting: changes, secret: secret) }
    }

    /// ``Keychain/delete(_:)`` without blocking the caller.
    ///
    /// - Returns: How many items were deleted.
    /// - Throws: `KeychainError.itemNotFound` if nothing matches.
    @discardableResult
    public func delete(_ query: Query) async throws(KeychainError) -> Int {
        try await offload { (keychain) throws(KeychainError) in try keychain.delete(query) }
    }

    /// ``Keychain/deleteIfPresent(_:)`` without blocking the caller.
    ///
    /// - Returns: How many items were deleted; 0 if nothing matched.
    /// - Throws: What committing throws; never for a missing item.
    @discardableResult
    public func deleteIfPresent(_ query: Query) async throws(KeychainError) -> Int {
        try await offload { (keychain) throws(KeychainError) in try keychain.deleteIfPresent(query) }
    }

    /// ``Keychain/search(_:returning:)`` without blocking the caller.
    ///
    /// - Throws: `KeychainError.itemNotFound` if nothing matches.
    public func search(_ query: Query, returning: ReturnOptions? = nil) async throws(KeychainError) -> [SearchResult] {
        try await offload { (keychain) throws(KeychainError) in try keychain.search(query, returning: returning) }
    }

    /// ``Keychain/find(_:matching:loadingValues:)`` without blocking the caller.
    ///
    /// - Throws: `KeychainError.itemNotFound` if nothing matches; `.invalidParameter` if the query's class is
    ///   not `type`'s.
    public func find<Item: KeychainItem>(
        _ type: Item.Type, matching query: Query, loadingValues: Bool = true
    ) async throws(KeychainError) -> [Item] {
        try await offload { (keychain) throws(KeychainError) in try keychain.find(type, matching: query, loadingValues: loadingValues) }
    }

    /// ``Keychain/findIdentities(matching:loadingValues:)`` without blocking the caller.
    ///
    /// - Throws: `KeychainError.itemNotFound` if nothing matches.
    public func findIdentities(matching query: Query = Query(.identity), loadingValues: Bool = true) async throws(KeychainError) -> [Identity] {
        try await offload { (keychain) throws(KeychainError) in try keychain.findIdentities(matching: query, loadingValues: loadingValues) }
    }

    /// ``Keychain/secret(for:)`` without blocking the caller.
    ///
    /// - Throws: `KeychainError.itemNotFound` if no live item has this reference.
    public func secret(for reference: PersistentReference) async throws(KeychainError) -> [UInt8] {
        try await offload { (keychain) throws(KeychainError) in try keychain.secret(for: reference) }
    }

    /// ``Keychain/batch(_:)-30xe9`` without blocking the caller: `body` runs on another task, holding the
    /// keychain's write lock, so it is synchronous.
    ///
    /// For example:
    /// ```swift
    /// try await keychain.async.batch { (batch) throws(KeychainError) in
    ///     try batch.add(GenericPassword(service: "a", account: "1", password: "x"))
    ///     try batch.delete(.genericPassword(service: "a", account: "0"))
    /// }
    /// ```
    ///
    /// - Throws: What `body` throws, or what committing throws; nothing changed then.
    @discardableResult
    public func batch<Result: Sendable>(
        _ body: @escaping @Sendable (inout Batch) throws(KeychainError) -> Result
    ) async throws(KeychainError) -> Result {
        try await offload { (keychain) throws(KeychainError) in try keychain.batch(body) }
    }
}

extension AsyncKeychain {
    /// ``batch(_:)-(_)`` for a body that throws errors of any type — what a closure written without a
    /// `throws(KeychainError)` annotation is. An error from the body discards the batch and is rethrown as is.
    ///
    /// For example:
    /// ```swift
    /// try await keychain.async.batch { batch in
    ///     try batch.add(GenericPassword(service: "a", account: "1", password: "x"))
    ///     try batch.deleteIfPresent(.genericPassword(service: "old"))
    /// }
    /// ```
    ///
    /// - Throws: What `body` throws, or a `KeychainError` from committing; nothing changed then.
    @discardableResult
    public func batch<Result: Sendable>(_ body: @escaping @Sendable (inout Batch) throws -> Result) async throws -> Result {
        let keychain = self.keychain
        return try await Task.detached { () throws -> Result in try keychain.batch(body) }.value
    }
}
