/// Creating, opening, salvaging and repairing keychain files from `async` code.
extension AsyncKeychain {
    /// ``Keychain/create(at:credential:options:)`` without blocking the caller.
    ///
    /// For example:
    /// ```swift
    /// let keychain = try await AsyncKeychain.create(at: "new.kcf", credential: .password("correct horse"))
    /// ```
    ///
    /// - Returns: The new keychain's `async` view.
    /// - Throws: What ``Keychain/create(at:credential:options:)`` throws.
    public static func create(
        at path: String, credential: Credential, options: Keychain.CreationOptions = Keychain.CreationOptions()
    ) async throws(KeychainError) -> AsyncKeychain {
        AsyncKeychain(try await offload { () throws(KeychainError) in try Keychain.create(at: path, credential: credential, options: options) })
    }

    /// ``Keychain/open(at:credential:options:)`` without blocking the caller.
    ///
    /// - Returns: The keychain's `async` view.
    /// - Throws: What ``Keychain/open(at:credential:options:)`` throws.
    public static func open(
        at path: String, credential: Credential, options: Keychain.OpenOptions = Keychain.OpenOptions()
    ) async throws(KeychainError) -> AsyncKeychain {
        AsyncKeychain(try await offload { () throws(KeychainError) in try Keychain.open(at: path, credential: credential, options: options) })
    }

    /// ``Keychain/openOrCreate(at:credential:options:creationOptions:)`` without blocking the caller.
    ///
    /// - Returns: The keychain's `async` view.
    /// - Throws: What ``Keychain/openOrCreate(at:credential:options:creationOptions:)`` throws.
    public static func openOrCreate(
        at path: String, credential: Credential, options: Keychain.OpenOptions = Keychain.OpenOptions(),
        creationOptions: Keychain.CreationOptions = Keychain.CreationOptions()
    ) async throws(KeychainError) -> AsyncKeychain {
        AsyncKeychain(try await offload { () throws(KeychainError) in
            try Keychain.openOrCreate(at: path, credential: credential, options: options, creationOptions: creationOptions)
        })
    }

    /// ``Keychain/salvage(from:credential:to:)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/salvage(from:credential:to:)`` throws.
    public static func salvage(
        from source: String, credential: Credential, to destination: String
    ) async throws(KeychainError) -> SalvageReport {
        try await offload { () throws(KeychainError) in try Keychain.salvage(from: source, credential: credential, to: destination) }
    }

    /// ``Keychain/repair(at:credential:keepingCopyAt:)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/repair(at:credential:keepingCopyAt:)`` throws.
    public static func repair(
        at path: String, credential: Credential, keepingCopyAt backup: String
    ) async throws(KeychainError) -> SalvageReport {
        try await offload { () throws(KeychainError) in try Keychain.repair(at: path, credential: credential, keepingCopyAt: backup) }
    }
}
