#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a keychain's file really is: the path given with every symbolic link resolved (SPEC.md §16).
///
/// Every path to one file must be one file: the lock file, the temporary files of a rewrite and its rename are
/// named after the file's own directory and name, so that a keychain opened through a link and one opened
/// through its target take one lock, and a rewrite through a link replaces the target and keeps the link. The
/// path is resolved once, when the keychain is created or opened; a link changed later does not move an open
/// keychain. (Hard links cannot be resolved to one name: ``Keychain`` refuses to write a file that has more
/// than one.)
enum KeychainPath {
    /// The canonical path of the existing file at `path`: absolute, with no symbolic link, `.` or `..` in it
    /// (realpath(3)).
    ///
    /// - Throws: `KeychainError.io` with ENOENT if nothing is there (or a symbolic link that leads nowhere), or
    ///   what realpath(3) failed with (EACCES, ELOOP, ENOTDIR).
    static func resolveExisting(_ path: String) throws(KeychainError) -> String {
        guard let resolved = realPath(path) else {
            let code = errno
            throw .io(operation: code == ENOENT ? "open" : "realpath (resolving symbolic links)", errno: code, path: path)
        }
        return resolved
    }

    /// The canonical path a new keychain at `path` will have: its directory resolved (realpath(3)), then its
    /// name.
    ///
    /// A symbolic link at `path` is not followed to create a file where the caller did not name one: if it
    /// leads to a file, that file exists; if it leads nowhere, creating is refused, naming the link's target.
    ///
    /// - Throws: `KeychainError.invalidParameter` if something exists at `path` or it is a symbolic link;
    ///   `.io` if the directory cannot be resolved (it does not exist, or is not searchable).
    static func resolveNew(_ path: String) throws(KeychainError) -> String {
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFLNK else { throw .invalidParameter("a file already exists at \(path)") }
            if let target = realPath(path) { throw .invalidParameter("a file already exists at \(path) (a symbolic link to \(target))") }
            throw .invalidParameter(
                "\(path) is a symbolic link to \(linkTarget(of: path)), which does not exist: create the keychain at that path "
                    + "itself, or remove the link")
        }
        let directory = directoryName(of: path)
        guard let resolvedDirectory = realPath(directory) else {
            throw .io(operation: "realpath (the keychain's directory)", errno: errno, path: directory)
        }
        return (resolvedDirectory == "/" ? "" : resolvedDirectory) + "/" + baseName(of: path)
    }

    /// realpath(3) of `path`, or `nil` with `errno` set.
    private static func realPath(_ path: String) -> String? {
        // realpath allocates the result with malloc; it is copied into a String and freed here.
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// What the symbolic link at `path` points to, made absolute against the link's directory when relative
    /// (for messages only).
    static func linkTarget(of path: String) -> String {
        var buffer = [CChar](repeating: 0, count: 4_096)
        let count = buffer.withUnsafeMutableBufferPointer { readlink(path, $0.baseAddress!, $0.count) }
        guard count > 0 else { return "(unreadable)" }
        let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return target.hasPrefix("/") ? target : directoryName(of: path) + "/" + target
    }
}
