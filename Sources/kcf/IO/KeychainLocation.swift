#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which keychain file a command uses, and making its directory.
///
/// In order: `--keychain PATH` (or `-k PATH`, or the command's keychain argument), `$KCF_KEYCHAIN`, then the
/// per-user default: `$XDG_DATA_HOME/kcf/default.kcf`, else `~/.local/share/kcf/default.kcf` on Linux;
/// `~/Library/Application Support/kcf/default.kcf` on macOS.
enum KeychainLocation {
    /// The environment variable that may name the keychain.
    static let variable = "KCF_KEYCHAIN"

    /// The keychain path for a command.
    ///
    /// - Parameters:
    ///   - explicit: The path given on the command line, if any.
    ///   - environment: The process environment.
    /// - Throws: `CommandError` when no home directory can be found for the default.
    static func path(explicit: String?, environment: [String: String]) throws(CommandError) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let named = environment[variable], !named.isEmpty { return named }
        return try defaultPath(environment: environment)
    }

    /// The per-user default keychain path.
    static func defaultPath(environment: [String: String]) throws(CommandError) -> String {
        #if canImport(Darwin)
        return try home(environment) + "/Library/Application Support/kcf/default.kcf"
        #else
        // The first byte, not the first Character: "/" followed by a combining mark is one Character.
        if let data = environment["XDG_DATA_HOME"], data.utf8.first == UInt8(ascii: "/") { return data + "/kcf/default.kcf" }
        return try home(environment) + "/.local/share/kcf/default.kcf"
        #endif
    }

    /// Creates the missing directories above `path`, each with mode 0700 (existing ones are left as
    /// they are).
    ///
    /// - Throws: `CommandError` with status `.io` when a directory cannot be created.
    static func createParentDirectories(of path: String) throws(CommandError) {
        var missing: [String] = []
        var directory = parent(of: path)
        while !directory.isEmpty, directory != "/", !exists(directory) {
            missing.append(directory)
            directory = parent(of: directory)
        }
        for directory in missing.reversed() {
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw .failure("cannot create the directory \(directory): \(SystemError.describe(errno))", .io)
            }
        }
    }

    /// Whether something exists at `path`.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func home(_ environment: [String: String]) throws(CommandError) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir { return String(cString: directory) }
        throw .failed("no home directory for the default keychain; give --keychain PATH or set \(variable)")
    }
}
