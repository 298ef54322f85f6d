/// The lock of a keychain whose directory has no lock file and cannot hold one (a read-only mount, a directory
/// the process may not write): reads go on without a lock, and nothing may write (SPEC.md §16).
///
/// A shared lock is granted at once: on a read-only mount no writer can exist; in a read-only directory a
/// writer that can create the lock file may, and a read then sees its record being written as a torn tail until
/// it is whole. An exclusive lock is never granted; ``Keychain`` refuses every write before asking for one.
final class AbsentLockFile: KeychainLockHandle {
    /// Where the lock file would be, and the errno that refused creating it (for the error of an exclusive lock).
    let path: String
    let refusal: Int32

    init(path: String, refusal: Int32) {
        self.path = path
        self.refusal = refusal
    }

    func lock(exclusive: Bool, wait: Bool) throws(KeychainError) -> Bool {
        guard exclusive else { return true }
        guard wait else { return false }
        throw .io(operation: "flock (no lock file can be created)", errno: refusal, path: path)
    }

    func unlock() {}

    func unlockUnchanged() {}

    /// No counter: every read looks the path up.
    var changeCounter: UInt64? { nil }

    /// No acknowledgement: a reader proceeds as SPEC.md §9.3 says for none.
    func readAcknowledgement() -> [UInt8]? { nil }

    func writeAcknowledgement(_ bytes: [UInt8]) throws(KeychainError) {
        throw .io(operation: "pwrite (no lock file can be created)", errno: refusal, path: path)
    }

    /// There is no block to withdraw.
    func withdrawAcknowledgement() throws(KeychainError) {}
}
