#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a keychain can be read but not written (SPEC.md §16): the text of `KeychainError.readOnly`.
enum ReadOnlyReason: Sendable, Equatable, CustomStringConvertible {
    /// The keychain file could not be opened for writing; `errno` is why (EACCES, EROFS, EPERM).
    case fileNotWritable(errno: Int32)
    /// The lock file exists but could not be opened for writing, so no write can hold it exclusively.
    case lockFileNotWritable(path: String, errno: Int32)
    /// There is no lock file, and none can be created in the keychain's directory.
    case noLockFile(path: String, errno: Int32)
    /// The keychain file has `count` names (hard links).
    case hardLinks(count: Int)
    /// The directory at `path` does not take the new file a rewrite (compaction, a credential change) writes
    /// beside the keychain; `errno` is why.
    case directoryNotWritable(path: String, errno: Int32)

    /// Whether a failed open for writing with `code` may still allow reading: the file system is read-only, or
    /// permission (or an immutable flag) refuses the write.
    static func refusesOnlyWriting(_ code: Int32) -> Bool {
        code == EACCES || code == EROFS || code == EPERM
    }

    var description: String {
        switch self {
        case .fileNotWritable(let code):
            return "the file cannot be opened for writing (\(Self.name(of: code)))"
        case .lockFileNotWritable(let path, let code):
            return "its lock file \(path) cannot be opened for writing (\(Self.name(of: code))), and every write must hold it"
        case .noLockFile(let path, let code):
            return "its lock file \(path) does not exist and cannot be created (\(Self.name(of: code))), and every write must hold it"
        case .directoryNotWritable(let path, let code):
            return "its directory \(path) does not take new files (\(Self.name(of: code))), and compaction and every credential change "
                + "write the keychain anew there before renaming it into place"
        case .hardLinks(let count):
            return "the file has \(count) names (hard links): writers through different names would not take the same lock file, "
                + "and a rewrite would leave the other names on the old file; remove the other names to write to it"
        }
    }

    /// The symbolic name of the errnos a read-only keychain meets, and their meaning.
    private static func name(of code: Int32) -> String {
        switch code {
        case EROFS: return "EROFS, read-only file system"
        case EACCES: return "EACCES, permission denied"
        case EPERM: return "EPERM, operation not permitted"
        default: return "errno \(code)"
        }
    }
}
