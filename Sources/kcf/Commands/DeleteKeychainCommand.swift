#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `delete-keychain PATH`: deletes a keychain file and its lock file, as `security delete-keychain` does.
enum DeleteKeychainCommand {
    static let command = Command(
        name: "delete-keychain", summary: "delete a keychain file and its lock file",
        positionals: [PositionalSpec.keychain],
        details: ["""
            The keychain must be named (the argument, -k or $KCF_KEYCHAIN: never the per-user default alone), exist
            and start as a keychain file (exit 220 and 93 otherwise); it is deleted without its password, as
            security deletes one. A symbolic link is not followed: kcf names its target and deletes nothing. The
            deletion waits for a write in progress (the lock file, held exclusively); the directory is synced
            afterwards. In a directory kcf cannot write, nothing is deleted (exit 195).
            """],
        run: { (context) throws(CommandError) in try delete(context) })

    private static func delete(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let named = context.value("keychain") ?? context.arguments.positionals.first ?? context.environment[KeychainLocation.variable]
        guard named != nil else {
            throw .usage("name the keychain to delete (kcf delete-keychain PATH): the per-user default is not deleted unnamed")
        }
        let path = try context.keychainPath()
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT { throw .failure("no keychain at \(path); nothing was deleted", .io) }
            throw .failure("cannot look at \(path): \(SystemError.describe(code))", .io)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK:
            let target = resolved(path) ?? "a path that does not exist"
            throw .failure("\(path) is a symbolic link to \(target); nothing was deleted: `kcf delete-keychain \(target)` deletes the "
                + "keychain, `rm \(path)` the link", .invalidParameter)
        default:
            throw .failure("\(path) is not a file; nothing was deleted", .invalidParameter)
        }
        guard try KeychainFilePrefix.read(path) != nil else {
            throw .failure("\(path) is not a keychain file (it does not start with the KCF magic number); nothing was deleted", .corrupted)
        }
        let lockPath = path + ".lock"
        let lock = try takeLock(lockPath)
        defer { if lock >= 0 { close(lock) } }
        guard unlink(path) == 0 else {
            let code = errno
            let status: ExitStatus = [EACCES, EPERM, EROFS].contains(code) ? .readOnly : .io
            throw .failure("cannot delete \(path): \(SystemError.describe(code)); nothing was deleted", status)
        }
        if unlink(lockPath) != 0 && errno != ENOENT {
            throw .failure("deleted \(path), but not its lock file \(lockPath): \(SystemError.describe(errno))", .io)
        }
        let deleted = "deleted keychain \(SecurityText.quoted(Array(path.utf8))) and its lock file"
        guard syncDirectory(of: path) else {
            Output.line(deleted)
            throw .failure("the directory of \(path) could not be synced: the deletion may not survive a crash", .notConfirmedDurable)
        }
        Output.line(deleted)
        return .success
    }

    /// Opens the lock file and takes it exclusively, waiting (up to 10 s) for a write in progress; -1 when
    /// there is no lock file or it cannot be opened (then nothing else can lock it either: the deletion goes on).
    ///
    /// - Throws: `CommandError` with status `.io` when another process holds it for 10 s.
    private static func takeLock(_ lockPath: String) throws(CommandError) -> Int32 {
        let descriptor = open(lockPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return -1 }
        for _ in 0..<1_000 {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return descriptor }
            guard errno == EWOULDBLOCK || errno == EINTR else { return descriptor }
            usleep(10_000)
        }
        close(descriptor)
        throw .failure("another process has held \(lockPath) for 10 s (a write in progress?); nothing was deleted", .io)
    }

    /// fsync(2) of the directory that held `path`, so that the deletion is durable.
    private static func syncDirectory(of path: String) -> Bool {
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        let descriptor = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return fsync(descriptor) == 0
    }

    /// realpath(3) of `path`, or `nil`.
    private static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}
