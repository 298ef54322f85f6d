/// A keychain for `async` code: the same calls as ``Keychain``, each of them `async`, running the file I/O and
/// `fsync` on another task so that the caller's actor (the main actor, say) is free meanwhile.
///
/// The rule is one: `keychain.async.X(…)` is the `async` form of `keychain.X(…)`, with the same arguments,
/// result and errors, for every call that reads or writes the file. Because every method of this type is
/// `async`, `try await keychain.async.password(…)` can never resolve to the blocking call, in top-level code,
/// in an `async` function or in a closure. Properties that read only memory (``Keychain/path``,
/// ``Keychain/count``, ``Keychain/head``) are on ``keychain``.
///
/// A call is not cancelled with its task: a change that has started is finished, as it may already be durable.
///
/// For example:
/// ```swift
/// let keychain = try await AsyncKeychain.openOrCreate(at: "secrets.kcf", credential: .password("correct horse"))
/// try await keychain.setPassword("s3cret", forService: "mail.example.com", account: "ann")
/// let password = try await keychain.password(forService: "mail.example.com", account: "ann")
/// ```
public struct AsyncKeychain: Sendable {
    /// The keychain whose calls these are; its own calls block the calling thread.
    public let keychain: Keychain

    /// The `async` view of `keychain`; the same as `keychain.async`.
    ///
    /// - Parameter keychain: An open keychain.
    public init(_ keychain: Keychain) {
        self.keychain = keychain
    }

    /// Runs the blocking `body` on a task of its own and returns its result, keeping the typed error.
    static func offload<Result: Sendable>(
        _ body: @escaping @Sendable () throws(KeychainError) -> Result
    ) async throws(KeychainError) -> Result {
        let outcome = await Task.detached { () -> Swift.Result<Result, KeychainError> in
            do throws(KeychainError) {
                return .success(try body())
            } catch {
                return .failure(error)
            }
        }.value
        return try outcome.get()
    }

    /// Runs `body` with this view's keychain on a task of its own.
    func offload<Result: Sendable>(
        _ body: @escaping @Sendable (Keychain) throws(KeychainError) -> Result
    ) async throws(KeychainError) -> Result {
        let keychain = self.keychain
        return try await Self.offload { () throws(KeychainError) -> Result in try body(keychain) }
    }
}

extension Keychain {
    /// The `async` form of this keychain's calls: `try await keychain.async.password(…)` (see ``AsyncKeychain``).
    ///
    /// For example:
    /// ```swift
    /// func signIn(_ keychain: Keychain) async throws -> String {
    ///     try await keychain.async.password(forService: "mail.example.com", account: "ann")
    /// }
    /// ```
    public var async: AsyncKeychain { AsyncKeychain(self) }
}
