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

/// An open file: positioned reads and writes, size, truncation and durability.
protocol KeychainFileHandle: AnyObject, Sendable {
    /// The path the file was opened with (for error messages).
    var path: String { get }
    /// Why the file was opened for reading only (the errno that refused opening it for writing), or `nil` if it
    /// is open for writing.
    var writeRefusal: Int32? { get }
    /// How many names (hard links) the file has.
    func linkCount() throws(KeychainError) -> Int
    /// Reads up to `buffer.count` bytes at `offset`; returns the number read (0 at end of file).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeychainError) -> Int
    /// Writes up to `bytes.count` bytes at `offset`; returns the number written (possibly fewer).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) -> Int
    /// The current size of the file.
    func size() throws(KeychainError) -> Int
    /// Sets the size of the file.
    func truncate(to size: Int) throws(KeychainError)
    /// Makes written data durable (fdatasync, or F_FULLFSYNC where available).
    func sync() throws(KeychainError)
    /// Which file this is (device and inode): compared with ``FileSystem/identity(of:)`` to notice that the
    /// path now names another file (a compaction by another process renamed a new file into place).
    func identity() throws(KeychainError) -> FileIdentity
    /// Closes the file; later calls fail.
    func close()
}

/// A file's identity on its device: two paths, or a path and an open descriptor, name the same file exactly
/// when their identities are equal.
struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64
}

/// An advisory whole-file lock (flock(2)) on a lock file beside the keychain, shared between processes.
///
/// Locks belong to the open file description: two `KeychainLockHandle`s on the same lock file, even in one
/// process, exclude each other as two processes would.
protocol KeychainLockHandle: AnyObject, Sendable {
    /// Takes the lock, waiting for it if `wait` is true; returns false if it is held and `wait` is false.
    func lock(exclusive: Bool, wait: Bool) throws(KeychainError) -> Bool
    /// Releases the lock. After holding it exclusively, first adds one to the change counter.
    func unlock()
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

extension KeychainFileHandle {
    /// Reads exactly `count` bytes at `offset`, looping over short reads.
    ///
    /// - Throws: `KeychainError.corrupted` if the file ends first (the caller checked the size, so a short
    ///   file here means it changed underneath us); `.io` on a failed read.
    func readExactly(count: Int, at offset: Int) throws(KeychainError) -> [UInt8] {
        // The array is filled by the reads, not zeroed first (a large open reads every byte of the file): on a
        // failure, nothing uninitialized is kept — the array holds the bytes read so far, then is dropped.
        var failure: KeychainError? = nil
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            while initialized < count {
                let done = initialized
                do throws(KeychainError) {
                    let got = try read(into: UnsafeMutableRawBufferPointer(rebasing: raw[done...]), at: offset + done)
                    guard got > 0 else {
                        failure = KeychainError.corrupted(offset: offset + done, reason: "file ended \(count - done) bytes early")
                        return
                    }
                    precondition(got <= count - done, "a read returned more bytes than it was given room for")
                    initialized += got
                } catch {
                    failure = error
                    return
                }
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// Writes all of `bytes` at `offset`, looping over short writes.
    func writeAll(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) {
        var done = 0
        while done < bytes.count {
            let written = try write(UnsafeRawBufferPointer(rebasing: bytes[done...]), at: offset + done)
            guard written > 0 else {
                throw KeychainError.io(operation: "write (no progress)", errno: EIO, path: path)
            }
            done += written
        }
    }
}

/// The real file system, through POSIX calls. EINTR is retried in one place, `retrying`.
struct PosixFileSystem: FileSystem {
    func openReadWrite(_ path: String) throws(KeychainError) -> any KeychainFileHandle {
        let fd = try retrying("open", path) { systemOpen(path, O_RDWR | O_CLOEXEC, 0) }
        return PosixFileHandle(descriptor: fd, path: path)
    }

    func openReadOnly(_ path: String, refusal: Int32) throws(KeychainError) -> any KeychainFileHandle {
        let fd = try retrying("open (read-only)", path) { systemOpen(path, O_RDONLY | O_CLOEXEC, 0) }
        return PosixFileHandle(descriptor: fd, path: path, writeRefusal: refusal)
    }

    func createExclusive(_ path: String) throws(KeychainError) -> any KeychainFileHandle {
        let fd = try retrying("open (create)", path) { systemOpen(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
        // The umask cannot widen 0600, but an inherited ACL or a platform default could: set it explicitly.
        _ = fchmod(fd, 0o600)
        return PosixFileHandle(descriptor: fd, path: path)
    }

    func rename(_ source: String, to destination: String) throws(KeychainError) {
        _ = try retrying("rename", destination) { systemRename(source, destination) }
    }

    func syncDirectory(containing path: String) throws(KeychainError) {
        let directory = directoryName(of: path)
        let fd = try retrying("open (directory)", directory) { systemOpen(directory, O_RDONLY | O_CLOEXEC, 0) }
        defer { _ = systemClose(fd) }
        _ = try retrying("fsync (directory)", directory) { fsync(fd) }
    }

    func link(_ source: String, to destination: String) throws(KeychainError) {
        _ = try retrying("link", destination) { systemLink(source, destination) }
    }

    func identity(of path: String) throws(KeychainError) -> FileIdentity? {
        try identityAndSize(of: path)?.identity
    }

    func identityAndSize(of path: String) throws(KeychainError) -> (identity: FileIdentity, size: Int)? {
        var info = stat()
        // `withCString` lends a native string's own bytes; passing `path` straight to stat(2) would copy it
        // into a new array on every call, and a read makes this call each time.
        if path.withCString({ stat($0, &info) }) != 0 {
            if errno == ENOENT { return nil }
            throw KeychainError.io(operation: "stat", errno: errno, path: path)
        }
        return (FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)), Int(info.st_size))
    }

    func contentsOfDirectory(_ path: String) throws(KeychainError) -> [String] {
        guard let directory = opendir(path) else { throw KeychainError.io(operation: "opendir", errno: errno, path: path) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            // `d_name` is a fixed-size C array holding a NUL-terminated name; read it in place.
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                    String(cString: $0)
                }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    func openLock(_ path: String) throws(KeychainError) -> any KeychainLockHandle {
        PosixLockHandle(descriptor: try openLockDescriptor(path, flags: O_RDWR | O_CREAT), path: path)
    }

    func openLockReadOnly(_ path: String) throws(KeychainError) -> (any KeychainLockHandle)? {
        do {
            return PosixLockHandle(descriptor: try openLockDescriptor(path, flags: O_RDONLY), path: path)
        } catch .io(_, let code, _) where code == ENOENT {
            return nil
        }
    }

    /// Opens the lock file with `flags` (SPEC.md §16): never through a symbolic link (O_NOFOLLOW), which a
    /// process that may write the directory could plant to make the keychain write the counter into another
    /// file; never blocking (O_NONBLOCK), as opening a FIFO would; and only a regular file.
    private func openLockDescriptor(_ path: String, flags: Int32) throws(KeychainError) -> Int32 {
        let fd: Int32
        do {
            fd = try retrying("open (lock file)", path) { systemOpen(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600) }
        } catch .io(let operation, let code, _) where code == ELOOP || code == EMLINK || code == EISDIR {
            // O_NOFOLLOW fails at a symbolic link with ELOOP (EMLINK on FreeBSD); opening a directory for writing
            // fails with EISDIR.
            var info = stat()
            guard lstat(path, &info) == 0 else { throw .io(operation: operation, errno: code, path: path) }
            if info.st_mode & S_IFMT == S_IFLNK {
                throw .lockFileRefused(
                    path: path,
                    reason: "it is a symbolic link (to \(KeychainPath.linkTarget(of: path))); a lock file is never followed, "
                        + "so that a link cannot make the keychain write another file: remove the link")
            }
            throw .lockFileRefused(path: path, reason: Self.notRegularReason(info.st_mode))
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            _ = systemClose(fd)
            throw .io(operation: "fstat (lock file)", errno: code, path: path)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            _ = systemClose(fd)
            throw .lockFileRefused(path: path, reason: Self.notRegularReason(info.st_mode))
        }
        return fd
    }

    /// Why a lock path holding something other than a regular file is refused.
    private static func notRegularReason(_ mode: mode_t) -> String {
        let kind: String
        switch mode & S_IFMT {
        case S_IFDIR: kind = "a directory"
        case S_IFIFO: kind = "a FIFO"
        case S_IFSOCK: kind = "a socket"
        case S_IFCHR, S_IFBLK: kind = "a device"
        default: kind = "of file type \(mode & S_IFMT)"
        }
        return "it is not a regular file but \(kind): remove it, and the keychain makes a lock file there"
    }

    func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    func resolve(_ path: String, creating: Bool) throws(KeychainError) -> String {
        creating ? try KeychainPath.resolveNew(path) : try KeychainPath.resolveExisting(path)
    }

    func removeIfPresent(_ path: String) throws(KeychainError) {
        let result = unlink(path)
        if result != 0 && errno != ENOENT {
            throw KeychainError.io(operation: "unlink", errno: errno, path: path)
        }
    }

    func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }
}

/// A file descriptor owned by the keychain.
///
/// `@unchecked Sendable`: the descriptor is an integer the kernel synchronises; positioned reads and writes
/// (pread/pwrite) share no offset state, and the Keychain serialises writers with its own lock.
final class PosixFileHandle: KeychainFileHandle, @unchecked Sendable {
    private var descriptor: Int32
    let path: String
    let writeRefusal: Int32?

    init(descriptor: Int32, path: String, writeRefusal: Int32? = nil) {
        self.descriptor = descriptor
        self.path = path
        self.writeRefusal = writeRefusal
    }

    deinit { close() }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        guard buffer.count > 0 else { return 0 }
        return try retrying("pread", path) { pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        guard bytes.count > 0 else { return 0 }
        return try retrying("pwrite", path) { pwrite(descriptor, bytes.baseAddress, bytes.count, off_t(offset)) }
    }

    func size() throws(KeychainError) -> Int {
        var info = stat()
        _ = try retrying("fstat", path) { Int(fstat(descriptor, &info)) }
        return Int(info.st_size)
    }

    func truncate(to size: Int) throws(KeychainError) {
        _ = try retrying("ftruncate", path) { Int(ftruncate(descriptor, off_t(size))) }
    }

    func sync() throws(KeychainError) {
        #if canImport(Darwin)
        // On Apple platforms fsync does not flush the drive's cache; F_FULLFSYNC does.
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
        _ = try retrying("fsync", path) { Int(fsync(descriptor)) }
        #else
        _ = try retrying("fdatasync", path) { Int(fdatasync(descriptor)) }
        #endif
    }

    func identity() throws(KeychainError) -> FileIdentity {
        var info = stat()
        _ = try retrying("fstat", path) { Int(fstat(descriptor, &info)) }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    func linkCount() throws(KeychainError) -> Int {
        var info = stat()
        _ = try retrying("fstat", path) { Int(fstat(descriptor, &info)) }
        return Int(info.st_nlink)
    }

    func close() {
        if descriptor >= 0 {
            _ = systemClose(descriptor)
            descriptor = -1
        }
    }
}

/// The lock file's descriptor, kept open for the keychain's lifetime; `flock` on it, and its change counter
/// mapped (``LockFileCounter``).
///
/// `@unchecked Sendable`: the descriptor is only an integer, and `heldExclusively` is changed only by the
/// Keychain that owns the handle, which calls `lock` and `unlock` under its own lock.
final class PosixLockHandle: KeychainLockHandle, @unchecked Sendable {
    private let descriptor: Int32
    private let path: String
    private let counter: LockFileCounter?
    private var heldExclusively = false

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
        counter = LockFileCounter(descriptor: descriptor)
    }

    deinit {
        counter?.unmap()
        _ = systemClose(descriptor)
    }

    var changeCounter: UInt64? { counter?.value }

    func lock(exclusive: Bool, wait: Bool) throws(KeychainError) -> Bool {
        let operation = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB)
        while true {
            if flock(descriptor, operation) == 0 {
                heldExclusively = exclusive
                return true
            }
            let code = errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK && !wait { return false }
            throw KeychainError.io(operation: "flock", errno: code, path: path)
        }
    }

    func readAcknowledgement() -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: Acknowledgement.size)
        var got = 0
        while got < bytes.count {
            let count = bytes.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress! + got, $0.count - got, off_t(Acknowledgement.offset + got))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            got += count
        }
        return bytes
    }

    func withdrawAcknowledgement() throws(KeychainError) {
        try writeAcknowledgement([UInt8](repeating: 0, count: Acknowledgement.magic.count))
    }

    func writeAcknowledgement(_ bytes: [UInt8]) throws(KeychainError) {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes {
                pwrite(descriptor, $0.baseAddress! + written, $0.count - written, off_t(Acknowledgement.offset + written))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw KeychainError.io(operation: "pwrite (acknowledgement)", errno: count < 0 ? errno : EIO, path: path) }
            written += count
        }
        #if canImport(Darwin)
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
        _ = try retrying("fsync (lock file)", path) { Int(fsync(descriptor)) }
        #else
        _ = try retrying("fdatasync (lock file)", path) { Int(fdatasync(descriptor)) }
        #endif
    }

    func unlock() {
        if heldExclusively {
            // Before releasing: a process that loads the counter after this returns sees the change.
            LockFileCounter.increment(descriptor: descriptor)
            heldExclusively = false
        }
        _ = flock(descriptor, LOCK_UN)
    }
}

/// Runs a system call, retrying on EINTR; a negative result becomes `KeychainError.io`.
private func retrying<Result: BinaryInteger>(
    _ operation: String, _ path: String, _ call: () -> Result
) throws(KeychainError) -> Result {
    while true {
        let result = call()
        if result >= 0 { return result }
        let code = errno
        if code == EINTR { continue }
        throw KeychainError.io(operation: operation, errno: code, path: path)
    }
}

/// The directory part of a path ("." for a bare file name).
func directoryName(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let directory = String(path[..<slash])
    return directory.isEmpty ? "/" : directory
}

// Thin wrappers so the calls above read the same on every platform.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Glibc)
    return Glibc.open(path, flags, mode)
    #elseif canImport(Musl)
    return Musl.open(path, flags, mode)
    #else
    return Darwin.open(path, flags, mode)
    #endif
}

private func systemClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
    return Glibc.close(descriptor)
    #elseif canImport(Musl)
    return Musl.close(descriptor)
    #else
    return Darwin.close(descriptor)
    #endif
}

private func systemLink(_ source: String, _ destination: String) -> Int32 {
    #if canImport(Glibc)
    return Glibc.link(source, destination)
    #elseif canImport(Musl)
    return Musl.link(source, destination)
    #else
    return Darwin.link(source, destination)
    #endif
}

private func systemRename(_ source: String, _ destination: String) -> Int32 {
    #if canImport(Glibc)
    return Glibc.rename(source, destination)
    #elseif canImport(Musl)
    return Musl.rename(source, destination)
    #else
    return Darwin.rename(source, destination)
    #endif
}
