/// The parity scrub of a format version 2 or 3 file (SPEC.md §19.5): an open reads and verifies every record but not
/// the parity that would repair them, so parity that a torn write or decay spoiled is found only by comparing it
/// with the records it protects.
extension Keychain {
    /// Compares the parity of every log chunk whose records verified with the parity of those records, and reports
    /// the chunks whose stored parity differs (a scrub, SPEC.md §19.5). Writes nothing.
    ///
    /// Such parity costs nothing while the records verify — parity is never trusted — but it would not repair a
    /// later fault in its chunk: ``repairParity(keepingCopyAt:)`` rewrites it. The records are those this keychain
    /// last verified (when it opened, or caught up with another process); the whole file is read, under the lock
    /// file's shared lock. A version 1 file has no parity: its report is ``ParityReport/none``.
    ///
    /// For example:
    /// ```swift
    /// let parity = try keychain.checkParity()
    /// if !parity.staleChunks.isEmpty { try keychain.repairParity() }
    /// ```
    ///
    /// - Returns: The chunks compared, those whose parity differs, and those that could not all be read.
    /// - Throws: `KeychainError.invalidParameter` for a keychain opened with ``OpenOptions/recover`` (its records
    ///   did not all verify); `.missingEntitlement` for a version 3 keychain opened with a credential scoped to
    ///   access groups, which cannot verify the other groups' records; what catching up throws (`.corrupted`, `.io`, …).
    public func checkParity() throws(KeychainError) -> ParityReport {
        try withRead { () throws(KeychainError) -> ParityReport in
            _ = try lockFile.lock(exclusive: false, wait: true)
            defer { lockFile.unlock() }
            // Nothing another process commits while the lock is held; what it committed before, caught up with.
            if try log.hasChanged() { try catchUp() }
            return try log.scrubParity(&index, rewriting: false)
        }
    }

    /// Rewrites, in place, the parity of every log chunk that does not match its records, after reading and
    /// verifying the whole file again (SPEC.md §19.5, §26.5).
    ///
    /// Under the lock file's exclusive lock: the file is read again and every record verified, so that parity is
    /// computed only from bytes verified now; what that read repaired is written back, with the last chunk's
    /// parity, as every write does; then, for each complete chunk, only the parity bytes that differ from the
    /// parity of its records are written, and the file is synced. No record is changed, so the keychain's head and
    /// epoch stay as they are. A crash at any point leaves the records as they were and the parity partly old,
    /// which the next scrub finds again. A chunk whose bytes cannot all be read now is left alone (listed in
    /// ``ParityReport/unreadableChunks``). A version 1 file has no parity: nothing is written (but the copy, if asked
    /// for), and the report is ``ParityReport/none``.
    ///
    /// For example:
    /// ```swift
    /// let rewritten = try keychain.repairParity(keepingCopyAt: "secrets.kcf.before-scrub")
    /// print(rewritten)   // rewrote the parity of log chunk 1 …
    /// ```
    ///
    /// - Parameter backup: Where to keep a copy of the file, made durable before anything is written; nothing may
    ///   exist there. `nil`: no copy.
    /// - Returns: The chunks whose parity was rewritten, with ``ParityReport/rewritten`` set when there were any.
    /// - Throws: `KeychainError.corrupted` if records do not verify, even repaired, or are set aside (a final record
    ///   that may hold committed items: ``repair(at:credential:keepingCopyAt:)`` handles those); `.readOnly`;
    ///   `.invalidParameter` if `backup` exists; `.missingEntitlement`, before any copy, for a credential scoped to
    ///   access groups (as ``checkParity()``); `.io` if a read or write fails.
    @discardableResult
    public func repairParity(keepingCopyAt backup: String? = nil) throws(KeychainError) -> ParityReport {
        try withWrite { () throws(KeychainError) -> ParityReport in
            if log.accessScope != nil {
                throw .missingEntitlement(group: nil, operation: "rewriting the keychain's parity")
            }
            writesBegun = true
            if let backup {
                guard !log.fileSystem.exists(backup) else { throw .invalidParameter("a file already exists at \(backup)") }
                try Self.copyFile(log.path, to: backup, fileSystem: log.fileSystem)
            }
            return try log.scrubParity(&index, rewriting: true)
        }
    }
}
