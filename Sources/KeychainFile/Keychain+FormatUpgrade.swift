extension Keychain {
    /// The format version of the open file: 1, 2 or 3 (SPEC.md §12). A file of version 1 stays so until it is
    /// first rewritten: by ``upgradeFormat()``, ``compact()`` (or auto-compaction) or a change of its credentials.
    /// Versions 2 and 3 stay as they are.
    public var fileFormatVersion: Int { withLock { log.formatVersion } }

    /// Rewrites a file of format version 1 as version 2 (SPEC.md §26.7), with the same items, file id and master
    /// key, in a new epoch; does nothing to a file of version 2.
    ///
    /// The credential that opened the keychain gets a committed key slot; every other slot is kept as a legacy
    /// slot, and its credential opens the file as before. The rewrite is as crash-safe as ``compact()``: a crash
    /// leaves the old file or the new one, whole. Other processes that have the file open move to the new file
    /// on their next call; readers of this library before version 2 cannot open it.
    ///
    /// ```swift
    /// let keychain = try Keychain.open(at: "secrets.kcf", credential: .password(pw))
    /// if try keychain.upgradeFormat() { print("now format version \(keychain.fileFormatVersion)") }   // 2
    /// ```
    ///
    /// - Returns: Whether the file was upgraded (`false` when it was of version 2 already).
    /// - Throws: `KeychainError.corrupted` when the file ends in a record that may hold acknowledged items (repair
    ///   it first), `.readOnly`, `.invalidParameter` for a keychain opened to recover, `.limitReached` when the
    ///   key slots would not fit a version 2 header, `.io` when the new file cannot be written (the old one is
    ///   then unchanged), `.notConfirmedDurable` when it is in place but its directory could not be synced (the
    ///   keychain then uses the new file).
    @discardableResult
    public func upgradeFormat() throws(KeychainError) -> Bool {
        try withWrite { () throws(KeychainError) -> Bool in try upgradeLocked() }
    }
}
