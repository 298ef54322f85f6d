#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file operations the keychain needs, behind a protocol so that tests can inject failures (a write
/// that fails with ENOSPC, an fsync that returns EIO, a short write) and check that nothing committed is
/// lost. ``PosixFileSystem`` is the real implementation.
protocol FileSystem: Sendable {
    /// Opens an existing file for reading and writing. (Callers use ``openExisting(_:)``, which falls back to
    /// ``openReadOnly(_:refusal:)`` when writing is refused.)
    func openReadWrite(_ path: String) throws(KeychainError) -> any KeychainFileHandle
    /// Opens an existing file for reading only, because opening it for writing failed with `refusal` (EACCES,
    /// EROFS, EPERM), which the handle keeps as its ``KeychainFileHandle/writeRefusal``.
    func openReadOnly(_ path: String, refusal: Int32) throws(KeychainError) -> any KeychainFileHandle
    /// Creates a new file with mode 0600 for reading and writing; fails if it already exists.
    func createExclusive(_ path: String) throws(KeychainError) -> any KeychainFileHandle
    /// Atomically replaces `destination` with `source` (rename(2)).
    func rename(_ source: String, to destination: String) throws(KeychainError)
    /// Gives the file at `source` the second name `destination` (link(2)); fails if `destination` exists,
    /// so an existing file is never replaced.
    func link(_ source: String, to destination: String) throws(KeychainError)
    /// Which file is at `path` now (device and inode), or `nil` if nothing is there.
    func identity(of path: String) throws(KeychainError) -> FileIdentity?
    /// Which file is at `path` now and its size, from one stat(2), or `nil` if nothing is there: what a read
    /// compares with the open file to decide whether anything changed (SPEC.md §16).
    func identityAndSize(of path: String) throws(KeychainError) -> (identity: FileIdentity, size: Int)?
    /// The names in a directory (without "." and "..").
    func contentsOfDirectory(_ path: String) throws(KeychainError) -> [String]
    /// Opens for reading and writing, creating it with mode 0600 if needed, the lock file at `path` (SPEC.md §16),
    /// without following a symbolic link there.
    ///
    /// - Throws: `KeychainError.lockFileRefused` if a symbolic link or anything but a regular file is at `path`.
    func openLock(_ path: String) throws(KeychainError) -> any KeychainLockHandle
    /// Opens the existing lock file at `path` for reading only (its lock works as well), as ``openLock(_:)``
    /// does otherwise; `nil` if there is none.
    func openLockReadOnly(_ path: String) throws(KeychainError) -> (any KeychainLockHandle)?
    /// Whether a regular file is at `path` itself (lstat(2): a symbolic link is not followed).
    func isRegularFile(_ path: String) -> Bool
    /// The path with its symbolic links resolved (``KeychainPath``): of the existing file at `path`, or, if
    /// `creating`, of a new file there.
    func resolve(_ path: String, creating: Bool) throws(KeychainError) -> String
    /// Makes the directory entry changes in the directory containing `path` durable (fsync of the directory).
    func syncDirectory(containing path: String) throws(KeychainError)
    /// Removes a file; a missing file is not an error.
    func removeIfPresent(_ path: String) throws(KeychainError)
    /// Whether something exists at `path`.
    func exists(_ path: String) -> Bool
}
