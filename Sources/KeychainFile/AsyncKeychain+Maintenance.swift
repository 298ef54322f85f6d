/// Statistics, compaction and credential changes from `async` code: the calls of `Keychain+Compaction` and
/// `Keychain+Credentials`.
extension AsyncKeychain {
    /// ``Keychain/statistics()`` without blocking the caller.
    ///
    /// - Throws: What catching up with the file throws.
    public func statistics() async throws(KeychainError) -> KeychainStatistics {
        try await offload { (keychain) throws(KeychainError) in try keychain.statistics() }
    }

    /// ``Keychain/compact()`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/compact()`` throws.
    @discardableResult
    public func compact() async throws(KeychainError) -> CompactionResult {
        try await offload { (keychain) throws(KeychainError) in try keychain.compact() }
    }

    /// ``Keychain/compact(progress:)`` without blocking the caller: `progress` is called on the thread the
    /// compaction runs on.
    ///
    /// - Throws: What ``Keychain/compact()`` throws.
    @discardableResult
    public func compact(progress: @escaping @Sendable (OperationProgress) -> Void) async throws(KeychainError) -> CompactionResult {
        try await offload { (keychain) throws(KeychainError) in try keychain.compact(progress: progress) }
    }

    /// ``Keychain/upgradeFormat(progress:)`` without blocking the caller: `progress` is called on the thread the
    /// upgrade runs on.
    ///
    /// - Returns: Whether the file was upgraded.
    /// - Throws: What ``Keychain/upgradeFormat()`` throws.
    @discardableResult
    public func upgradeFormat(progress: @escaping @Sendable (OperationProgress) -> Void) async throws(KeychainError) -> Bool {
        try await offload { (keychain) throws(KeychainError) in try keychain.upgradeFormat(progress: progress) }
    }

    /// ``Keychain/upgradeFormat()`` without blocking the caller.
    ///
    /// - Returns: Whether the file was upgraded (`false` when it was of version 2 already).
    /// - Throws: What ``Keychain/upgradeFormat()`` throws.
    @discardableResult
    public func upgradeFormat() async throws(KeychainError) -> Bool {
        try await offload { (keychain) throws(KeychainError) in try keychain.upgradeFormat() }
    }

    /// ``Keychain/checkParity()`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/checkParity()`` throws.
    public func checkParity() async throws(KeychainError) -> ParityReport {
        try await offload { (keychain) throws(KeychainError) in try keychain.checkParity() }
    }

    /// ``Keychain/repairParity(keepingCopyAt:)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/repairParity(keepingCopyAt:)`` throws.
    @discardableResult
    public func repairParity(keepingCopyAt backup: String? = nil) async throws(KeychainError) -> ParityReport {
        try await offload { (keychain) throws(KeychainError) in try keychain.repairParity(keepingCopyAt: backup) }
    }

    /// ``Keychain/refresh()`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/refresh()`` throws.
    public func refresh() async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in try keychain.refresh() }
    }

    /// ``Keychain/keySlots()`` without blocking the caller.
    ///
    /// - Throws: What catching up with the file throws.
    public func keySlots() async throws(KeychainError) -> [KeySlotInfo] {
        try await offload { (keychain) throws(KeychainError) in try keychain.keySlots() }
    }

    /// ``Keychain/addCredential(_:keyDerivation:)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/addCredential(_:keyDerivation:)`` throws.
    @discardableResult
    public func addCredential(
        _ credential: Credential, keyDerivation: PasswordKeyDerivation = .standard
    ) async throws(KeychainError) -> KeySlotInfo {
        try await offload { (keychain) throws(KeychainError) in try keychain.addCredential(credential, keyDerivation: keyDerivation) }
    }

    /// ``Keychain/addCredential(_:iterations:)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/addCredential(_:iterations:)`` throws.
    @discardableResult
    public func addCredential(_ credential: Credential, iterations: PasswordIterations) async throws(KeychainError) -> KeySlotInfo {
        try await addCredential(credential, keyDerivation: .pbkdf2(iterations))
    }

    /// ``Keychain/removeCredential(_:)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/removeCredential(_:)`` throws.
    public func removeCredential(_ credential: Credential) async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in try keychain.removeCredential(credential) }
    }

    /// ``Keychain/removeKeySlot(id:)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/removeKeySlot(id:)`` throws.
    public func removeKeySlot(id: [UInt8]) async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in try keychain.removeKeySlot(id: id) }
    }

    /// ``Keychain/changeCredential(from:to:keyDerivation:)`` without blocking the caller: a new master key, so that
    /// an old copy of the file and `old` open nothing written after the change; refused when other key slots exist.
    ///
    /// For example:
    /// ```swift
    /// try await keychain.async.changeCredential(from: .password("old horse"), to: .password("new horse battery"))
    /// ```
    ///
    /// - Parameters:
    ///   - old: A password or key that opens the keychain now: its slot must be the only one.
    ///   - new: The password or key that replaces it.
    ///   - keyDerivation: How a new password's key is derived (``PasswordKeyDerivation/standard`` by default).
    /// - Throws: What ``Keychain/changeCredential(from:to:keyDerivation:)`` throws.
    public func changeCredential(
        from old: Credential, to new: Credential, keyDerivation: PasswordKeyDerivation = .standard
    ) async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in
            try keychain.changeCredential(from: old, to: new, keyDerivation: keyDerivation)
        }
    }

    /// ``Keychain/changeCredential(from:to:iterations:)`` without blocking the caller: a new master key.
    ///
    /// - Parameters:
    ///   - old: A password or key that opens the keychain now: its slot must be the only one.
    ///   - new: The password or key that replaces it.
    ///   - iterations: The PBKDF2 cost, for a new password.
    /// - Throws: What ``Keychain/changeCredential(from:to:iterations:)`` throws.
    public func changeCredential(from old: Credential, to new: Credential, iterations: PasswordIterations) async throws(KeychainError) {
        try await changeCredential(from: old, to: new, keyDerivation: .pbkdf2(iterations))
    }

    /// ``Keychain/changePassword(from:to:keyDerivation:)`` without blocking the caller: a new master key, so that
    /// an old copy of the file and the old password open nothing written after the change.
    ///
    /// For example:
    /// ```swift
    /// try await keychain.async.changePassword(from: "correct horse", to: "a longer passphrase")
    /// ```
    ///
    /// - Parameters:
    ///   - old: The password that opens the keychain now: its slot must be the only one.
    ///   - new: The new password.
    ///   - keyDerivation: How the new password's key is derived (``PasswordKeyDerivation/standard`` by default).
    /// - Throws: `KeychainError.wrongCredentials` if `old` opens no slot; what
    ///   ``Keychain/changePassword(from:to:keyDerivation:)`` throws.
    public func changePassword(
        from old: String, to new: String, keyDerivation: PasswordKeyDerivation = .standard
    ) async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in
            try keychain.changePassword(from: old, to: new, keyDerivation: keyDerivation)
        }
    }

    /// ``Keychain/changePassword(from:to:iterations:)`` without blocking the caller: a new master key.
    ///
    /// - Parameters:
    ///   - old: The password that opens the keychain now: its slot must be the only one.
    ///   - new: The new password.
    ///   - iterations: The PBKDF2 cost.
    /// - Throws: What ``Keychain/changePassword(from:to:iterations:)`` throws.
    public func changePassword(from old: String, to new: String, iterations: PasswordIterations) async throws(KeychainError) {
        try await changePassword(from: old, to: new, keyDerivation: .pbkdf2(iterations))
    }

    /// ``Keychain/changeCredentialKeepingKeys(from:to:keyDerivation:)`` without blocking the caller: the key slot
    /// alone, the master key kept — which does not protect against an old copy of the file and `old`.
    ///
    /// For example:
    /// ```swift
    /// try await keychain.async.changeCredentialKeepingKeys(from: .password("old"), to: .password("new horse"))
    /// ```
    ///
    /// - Parameters:
    ///   - old: A password or key that opens the keychain now.
    ///   - new: The password or key that replaces it.
    ///   - keyDerivation: How a new password's key is derived (``PasswordKeyDerivation/standard`` by default).
    /// - Throws: What ``Keychain/changeCredentialKeepingKeys(from:to:keyDerivation:)`` throws.
    public func changeCredentialKeepingKeys(
        from old: Credential, to new: Credential, keyDerivation: PasswordKeyDerivation = .standard
    ) async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in
            try keychain.changeCredentialKeepingKeys(from: old, to: new, keyDerivation: keyDerivation)
        }
    }

    /// ``Keychain/changePasswordKeepingKeys(from:to:keyDerivation:)`` without blocking the caller: the key slot
    /// alone, the master key kept — which does not protect against an old copy of the file and the old password.
    ///
    /// For example:
    /// ```swift
    /// try await keychain.async.changePasswordKeepingKeys(from: "old", to: "new horse")
    /// ```
    ///
    /// - Parameters:
    ///   - old: The password that opens the keychain now.
    ///   - new: The new password.
    ///   - keyDerivation: How the new password's key is derived (``PasswordKeyDerivation/standard`` by default).
    /// - Throws: What ``Keychain/changePasswordKeepingKeys(from:to:keyDerivation:)`` throws.
    public func changePasswordKeepingKeys(
        from old: String, to new: String, keyDerivation: PasswordKeyDerivation = .standard
    ) async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in
            try keychain.changePasswordKeepingKeys(from: old, to: new, keyDerivation: keyDerivation)
        }
    }

    /// ``Keychain/rotateMasterKey(credentials:keyDerivation:)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/rotateMasterKey(credentials:keyDerivation:)`` throws.
    public func rotateMasterKey(
        credentials: [Credential], keyDerivation: PasswordKeyDerivation = .standard
    ) async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in
            try keychain.rotateMasterKey(credentials: credentials, keyDerivation: keyDerivation)
        }
    }

    /// ``Keychain/rotateMasterKey(credentials:iterations:)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/rotateMasterKey(credentials:iterations:)`` throws.
    public func rotateMasterKey(credentials: [Credential], iterations: PasswordIterations) async throws(KeychainError) {
        try await rotateMasterKey(credentials: credentials, keyDerivation: .pbkdf2(iterations))
    }
}
