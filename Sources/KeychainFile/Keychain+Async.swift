#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `async` variants of the keychain's calls, for code that must not block its task's thread on file I/O and
/// `fsync`: each runs the synchronous call on a detached task and awaits it. In an `async` context Swift picks
/// these overloads, so `try await keychain.add(item)` reads as the synchronous call does.
///
/// For example:
/// ```swift
/// func signIn(_ keychain: Keychain) async throws {
///     try await keychain.setPassword("s3cret", forService: "mail.example.com", account: "ann")
///     let password = try await keychain.password(forService: "mail.example.com", account: "ann")
/// }
/// ```
extension Keychain {
    /// Runs `body` off the caller's executor and returns its result, keeping the typed error.
    private func offload<Result: Sendable>(
        _ body: @escaping @Sendable (Keychain) throws(KeychainError) -> Result
    ) async throws(KeychainError) -> Result {
        let outcome = await Task.detached { [self] () -> Swift.Result<Result, KeychainError> in
            do throws(KeychainError) {
                return .success(try body(self))
            } catch {
                return .failure(error)
            }
        }.value
        return try outcome.get()
    }

    /// Opens a keychain without blocking the caller's thread: ``open(at:credential:options:)``.
    public static func open(
        at path: String, credential: Credential, options: OpenOptions = OpenOptions()
    ) async throws(KeychainError) -> Keychain {
        let outcome = await Task.detached { () -> Swift.Result<Keychain, KeychainError> in
            do throws(KeychainError) {
                return .success(try Keychain.open(at: path, credential: credential, options: options))
            } catch {
                return .failure(error)
            }
        }.value
        return try outcome.get()
    }

    /// ``batch(_:)`` without blocking the caller's thread; `body` runs on another thread.
    public func batch<Result: Sendable>(
        _ body: @escaping @Sendable (inout Batch) throws(KeychainError) -> Result
    ) async throws(KeychainError) -> Result {
        try await offload { (keychain) throws(KeychainError) in try keychain.batch(body) }
    }

    /// ``add(_:)-(Item)`` without blocking the caller's thread.
    @discardableResult
    public func add<Item: KeychainItem>(_ item: Item) async throws(KeychainError) -> PersistentReference {
        try await offload { (keychain) throws(KeychainError) in try keychain.add(item) }
    }

    /// ``update(_:setting:secret:)`` without blocking the caller's thread.
    @discardableResult
    public func update(
        _ query: Query, setting changes: [Attribute: AttributeValue], secret: [UInt8]? = nil
    ) async throws(KeychainError) -> Int {
        try await offload { (keychain) throws(KeychainError) in try keychain.update(query, setting: changes, secret: secret) }
    }

    /// ``delete(_:)`` without blocking the caller's thread.
    @discardableResult
    public func delete(_ query: Query) async throws(KeychainError) -> Int {
        try await offload { (keychain) throws(KeychainError) in try keychain.delete(query) }
    }

    /// ``search(_:returning:)`` without blocking the caller's thread.
    public func search(_ query: Query, returning: ReturnOptions? = nil) async throws(KeychainError) -> [SearchResult] {
        try await offload { (keychain) throws(KeychainError) in try keychain.search(query, returning: returning) }
    }

    /// ``find(_:matching:loadingValues:)`` without blocking the caller's thread.
    public func find<Item: KeychainItem>(
        _ type: Item.Type, matching query: Query, loadingValues: Bool = true
    ) async throws(KeychainError) -> [Item] {
        try await offload { (keychain) throws(KeychainError) in try keychain.find(type, matching: query, loadingValues: loadingValues) }
    }

    /// ``password(forService:account:)`` without blocking the caller's thread.
    public func password(forService service: String, account: String) async throws(KeychainError) -> String {
        try await offload { (keychain) throws(KeychainError) in try keychain.password(forService: service, account: account) }
    }

    /// ``setPassword(_:forService:account:)`` without blocking the caller's thread.
    public func setPassword(_ password: String, forService service: String, account: String) async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in try keychain.setPassword(password, forService: service, account: account) }
    }

    /// ``compact()`` without blocking the caller's thread.
    @discardableResult
    public func compact() async throws(KeychainError) -> CompactionResult {
        try await offload { (keychain) throws(KeychainError) in try keychain.compact() }
    }
}
