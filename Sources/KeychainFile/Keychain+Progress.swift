// The long operations with a progress handler: each runs as its form without one does, and calls `progress` on the
// calling thread as it writes the new file (``OperationProgress``), with the keychain's lock held — the handler
// must not call back into the keychain.
extension Keychain {
    /// ``compact()``, calling `progress` as items are written to the new file: once for each record (about every
    /// 4,096 items) and once all are written.
    ///
    /// ```swift
    /// try keychain.compact { print("\r\($0.completed) of \($0.total)", terminator: "") }
    /// ```
    ///
    /// - Parameter progress: Called on the calling thread, inside the compaction; must not use this keychain.
    /// - Returns: The statistics before and after.
    /// - Throws: As ``compact()``.
    @discardableResult
    public func compact(progress: @escaping @Sendable (OperationProgress) -> Void) throws(KeychainError) -> CompactionResult {
        try ProgressReporting.with(progress) { () throws(KeychainError) -> CompactionResult in try compact() }
    }

    /// ``upgradeFormat()``, calling `progress` as items are written to the version 2 file.
    ///
    /// ```swift
    /// try keychain.upgradeFormat { print("\($0.completed) of \($0.total)") }
    /// ```
    ///
    /// - Parameter progress: Called on the calling thread, inside the upgrade; must not use this keychain.
    /// - Returns: Whether the file was upgraded.
    /// - Throws: As ``upgradeFormat()``.
    @discardableResult
    public func upgradeFormat(progress: @escaping @Sendable (OperationProgress) -> Void) throws(KeychainError) -> Bool {
        try ProgressReporting.with(progress) { () throws(KeychainError) -> Bool in try upgradeFormat() }
    }

    /// ``salvage(from:credential:to:)``, calling `progress` as items are written to the new file.
    ///
    /// ```swift
    /// let report = try Keychain.salvage(from: "damaged.kcf", credential: .password(pw), to: "saved.kcf") { print($0) }
    /// ```
    ///
    /// - Parameters:
    ///   - source: The damaged keychain file.
    ///   - credential: A password or key that opens it.
    ///   - destination: Where to write the new keychain; nothing may exist there.
    ///   - progress: Called on the calling thread as items are written.
    /// - Returns: What was kept and what could not be read.
    /// - Throws: As ``salvage(from:credential:to:)``.
    public static func salvage(
        from source: String, credential: Credential, to destination: String,
        progress: @escaping @Sendable (OperationProgress) -> Void
    ) throws(KeychainError) -> SalvageReport {
        try ProgressReporting.with(progress) { () throws(KeychainError) -> SalvageReport in
            try salvage(from: source, credential: credential, to: destination)
        }
    }

    /// ``repair(at:credential:keepingCopyAt:)``, calling `progress` as items are written to the new file.
    ///
    /// ```swift
    /// let report = try Keychain.repair(at: "secrets.kcf", credential: .password(pw), keepingCopyAt: "secrets.kcf.damaged") { print($0) }
    /// ```
    ///
    /// - Parameters:
    ///   - path: The damaged keychain file.
    ///   - credential: A password or key that opens it.
    ///   - backup: Where to keep the copy of the damaged file; nothing may exist there.
    ///   - progress: Called on the calling thread as items are written.
    /// - Returns: What was kept and what could not be read.
    /// - Throws: As ``repair(at:credential:keepingCopyAt:)``.
    public static func repair(
        at path: String, credential: Credential, keepingCopyAt backup: String,
        progress: @escaping @Sendable (OperationProgress) -> Void
    ) throws(KeychainError) -> SalvageReport {
        try ProgressReporting.with(progress) { () throws(KeychainError) -> SalvageReport in
            try repair(at: path, credential: credential, keepingCopyAt: backup)
        }
    }
}
