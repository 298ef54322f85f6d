#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An advisory whole-file lock (flock(2)) on a lock file beside the keychain, shared between processes.
///
/// Locks belong to the open file description: two `KeychainLockHandle`s on the same lock file, even in one
/// process, exclude each other as two processes would.
protocol KeychainLockHandle: AnyObject, Sendable {
    /// Takes the lock, waiting for it if `wait` is true; returns false if it is held and `wait` is false.
    func lock(exclusive: Bool, wait: Bool) throws(KeychainError) -> Bool
    /// Releases the lock. After holding it exclusively, first adds one to the change counter.
    func unlock()
    /// Releases the lock without adding one to the change counter: after an exclusive section that neither wrote to
    /// the keychain file nor put another file at its path (a change refused before it wrote), so that other
    /// processes do not look the path up for nothing (SPEC.md §16). After a shared lock, as ``unlock()``.
    func unlockUnchanged()
    /// The lock file's change counter (SPEC.md §16), read without a system call; `nil` when this handle cannot
    /// (its mapping failed), and then every read looks the path up.
    var changeCounter: UInt64? { get }
    /// The bytes of the acknowledgement block after the counter (SPEC.md §16.1, ``Acknowledgement``), or `nil`
    /// when the lock file holds none (too short) or cannot be read. Read under the lock, shared or exclusive.
    func readAcknowledgement() -> [UInt8]?
    /// Writes the acknowledgement block after the counter and makes the lock file durable (`fdatasync`). Only
    /// under the exclusive lock, after the keychain file's changes are durable.
    func writeAcknowledgement(_ bytes: [UInt8]) throws(KeychainError)
    /// Overwrites the block's magic with zeros and makes that durable, so that readers find no acknowledgement:
    /// what a writer does when it could not write its own (a stale one would say less was acknowledged).
    func withdrawAcknowledgement() throws(KeychainError)
}
