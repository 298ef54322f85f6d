extension FileSystem {
    /// Opens an existing keychain file for reading and writing, or, when writing is refused (EACCES, EROFS,
    /// EPERM: a file of mode 0400, a read-only mount, an immutable file), for reading only: a keychain that can
    /// only be read still opens (SPEC.md §16). The handle's ``KeychainFileHandle/writeRefusal`` says which.
    func openExisting(_ path: String) throws(KeychainError) -> any KeychainFileHandle {
        do {
            return try openReadWrite(path)
        } catch .io(_, let code, _) where ReadOnlyReason.refusesOnlyWriting(code) {
            return try openReadOnly(path, refusal: code)
        }
    }

    /// Opens the keychain file at `path` that a repair would replace, for reading, after checking that a write may
    /// change it (SPEC.md §15.1, §17): it is writable and has one name — a rename over a file with other names would
    /// leave them naming the damaged bytes.
    ///
    /// - Throws: `KeychainError.readOnly` if the file is not writable or has several hard links; `.io`.
    func openRepairable(_ path: String) throws(KeychainError) -> any KeychainFileHandle {
        let file = try openExisting(path)
        do throws(KeychainError) {
            if let refusal = file.writeRefusal {
                throw KeychainError.readOnly(path: path, reason: ReadOnlyReason.fileNotWritable(errno: refusal).description)
            }
            let names = try file.linkCount()
            if names > 1 { throw KeychainError.readOnly(path: path, reason: ReadOnlyReason.hardLinks(count: names).description) }
        } catch {
            file.close()
            throw error
        }
        return file
    }

    /// Opens the lock file at `path` of an existing keychain (SPEC.md §16): for writing, creating it if needed;
    /// when that is refused (EACCES, EROFS, EPERM), for reading if it exists — its lock works as well — or else
    /// none at all (``AbsentLockFile``), so that a keychain on a read-only mount or in a directory the process may
    /// not write can still be read.
    ///
    /// - Returns: The lock, and why the keychain must not be written through it, if it must not.
    /// - Throws: `KeychainError.lockFileRefused` if a symbolic link or anything but a regular file is at `path`;
    ///   `.io` if an existing lock file cannot be opened at all.
    func openLockForExistingKeychain(_ path: String) throws(KeychainError) -> (lock: any KeychainLockHandle, readOnly: ReadOnlyReason?) {
        do {
            return (try openLock(path), nil)
        } catch .io(_, let code, _) where ReadOnlyReason.refusesOnlyWriting(code) {
            if let lock = try openLockReadOnly(path) { return (lock, .lockFileNotWritable(path: path, errno: code)) }
            return (AbsentLockFile(path: path, refusal: code), .noLockFile(path: path, errno: code))
        }
    }
}
