/// Whether a keychain can be written, asked before a change rather than learnt from it (SPEC.md §16).
extension Keychain {
    /// Throws `KeychainError.readOnly` if a write to this keychain would be refused for want of write access,
    /// without changing the keychain: what every write checks before it begins — the lock file can be written,
    /// the file was opened for writing and has one name — and, when `rewriting`, that its directory takes a new
    /// file, which a change that rewrites the file (compaction, every credential change) writes beside it and
    /// renames over it. For that it creates an empty temporary file there and removes it. Returning says only
    /// that these held now: the write itself still checks them, and can fail for other reasons.
    ///
    /// For example, before asking for a new password:
    /// ```swift
    /// try keychain.checkWritable(rewriting: true)   // readOnly now, not after the new password is typed
    /// let new = askForNewPassword()
    /// try keychain.changePassword(from: old, to: new)
    /// ```
    ///
    /// - Parameter rewriting: Whether to check the directory too, for a change that rewrites the file.
    /// - Throws: `KeychainError.readOnly`, naming the path and why; `.invalidParameter` for a keychain opened with
    ///   recovery, which is never written; `.io` if the file or the directory cannot be examined.
    public func checkWritable(rewriting: Bool = false) throws(KeychainError) {
        try withLock { () throws(KeychainError) in
            try log.checkWritable()
            if let lockReadOnly { throw .readOnly(path: path, reason: lockReadOnly.description) }
            try checkOpenFileWritable()
            guard rewriting else { return }
            // A name a rewrite could have made: whoever finds it left over removes it (RecordLog.removeStrayTemporaryFiles).
            let probe = StagedFile.temporaryName(for: log.path, using: &random)
            let handle: any KeychainFileHandle
            do throws(KeychainError) {
                handle = try log.fileSystem.createExclusive(probe)
            } catch .io(_, let code, _) where ReadOnlyReason.refusesOnlyWriting(code) {
                throw .readOnly(
                    path: path, reason: ReadOnlyReason.directoryNotWritable(path: directoryName(of: log.path), errno: code).description)
            }
            handle.close()
            try? log.fileSystem.removeIfPresent(probe)
        }
    }
}
