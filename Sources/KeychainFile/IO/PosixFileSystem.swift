#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
