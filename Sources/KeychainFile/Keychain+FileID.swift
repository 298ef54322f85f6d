extension Keychain {
    /// The keychain's file id (SPEC.md §4): 16 random bytes chosen when the file was created and kept by
    /// compaction and credential changes, so that copies of one keychain can be told from other keychains.
    ///
    /// For example:
    /// ```swift
    /// let id = try keychain.fileID()
    /// print(id.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())
    /// ```
    ///
    /// - Returns: The 16 bytes.
    /// - Throws: What catching up with other processes throws.
    public func fileID() throws(KeychainError) -> [UInt8] {
        try withRead { () throws(KeychainError) -> [UInt8] in log.fileID }
    }
}
