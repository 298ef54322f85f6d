#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A command `kcf run` starts with posix_spawnp(3) and waits for: kcf's environment with some variables set
/// and some removed, the signals kcf ignores or handles back at their defaults in the child.
///
/// While the child runs, kcf ignores SIGINT and SIGQUIT (a terminal sends them to the child as well, which
/// decides) and passes SIGTERM and SIGHUP on to the child, so that stopping kcf stops what it runs.
enum ChildProcess {
    /// The child being waited for, for the signal handler; 0 when there is none. Only the main thread and the
    /// handler touch it (a handler reads an aligned 32-bit value).
    nonisolated(unsafe) private static var running: pid_t = 0

    /// Runs `arguments` (the first looked up in `$PATH`) with this process's environment, less the variables
    /// named in `removing` and those of `setting`, plus `setting` (name and value bytes), and waits for it.
    ///
    /// - Returns: Its exit status, or 128 + the signal that killed it.
    /// - Throws: `CommandError` with status 127 when the command is not found, 126 when it cannot be run (as
    ///   shells exit), `.failure` for another spawn error.
    static func run(_ arguments: [String], setting: [(name: String, value: [UInt8])], removing: Set<String>) throws(CommandError) -> Int32 {
        let replaced = removing.union(setting.map(\.name))
        var environment: [UnsafeMutablePointer<CChar>?] = []
        var entry = environ
        while let pointer = entry.pointee {
            let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))
            let name = String(decoding: bytes.prefix { $0 != UInt8(ascii: "=") }, as: UTF8.self)
            if !replaced.contains(name) { environment.append(strdup(pointer)) }
            entry += 1
        }
        var secretEntries: [(pointer: UnsafeMutablePointer<CChar>, count: Int)] = []
        for variable in setting {
            let bytes = Array(variable.name.utf8) + [UInt8(ascii: "=")] + variable.value + [0]
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
            bytes.withUnsafeBytes { UnsafeMutableRawPointer(pointer).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            secretEntries.append((pointer, bytes.count))
            environment.append(pointer)
        }
        let argv = arguments.map { strdup($0) }
        defer {
            for pointer in argv { free(pointer) }
            for pointer in environment.prefix(environment.count - secretEntries.count) { free(pointer) }
            // The secrets' copies are wiped before their memory is given back.
            for secret in secretEntries {
                memset(secret.pointer, 0, secret.count)
                secret.pointer.deallocate()
            }
        }

        #if canImport(Darwin)
        var attributes: posix_spawnattr_t? = nil
        #else
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        // The signals passed on are blocked from here until the child's pid is recorded: the child may run (and
        // be the reason for a SIGTERM) before posix_spawnp returns, and one that came in between would find no
        // child to pass it to. Blocked, it waits, and is passed on once they are unblocked below. The mask is
        // restored after the handlers (the defers run in reverse), so that one pending when the spawn fails
        // acts as it would have without kcf run.
        var forwarded = sigset_t(), previousMask = sigset_t()
        sigemptyset(&forwarded)
        for number in [SIGTERM, SIGHUP] { sigaddset(&forwarded, number) }
        pthread_sigmask(SIG_BLOCK, &forwarded, &previousMask)
        defer { pthread_sigmask(SIG_SETMASK, &previousMask, nil) }
        let previous = [SIGINT, SIGQUIT].map { ($0, signal($0, SIG_IGN)) } + [SIGTERM, SIGHUP].map { ($0, signal($0, forward)) }
        defer { for (number, handler) in previous { _ = signal(number, handler) } }

        var pid = pid_t()
        let spawned = posix_spawnp(&pid, arguments[0], nil, &attributes, argv + [nil], environment + [nil])
        guard spawned == 0 else {
            let reason = String(cString: strerror(spawned))
            switch spawned {
            case ENOENT: throw .failure("\(arguments[0]): command not found (\(reason))", ExitStatus.commandNotFound)
            case EACCES, ENOEXEC, EPERM, EISDIR: throw .failure("\(arguments[0]): cannot run it: \(reason)", ExitStatus.cannotRun)
            default: throw .failed("cannot start \(arguments[0]): \(reason)")
            }
        }
        running = pid
        defer { running = 0 }
        // Now they must reach kcf, to be passed on: also when a parent started kcf with them blocked.
        pthread_sigmask(SIG_UNBLOCK, &forwarded, nil)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw .failed("waitpid failed: \(String(cString: strerror(errno)))") }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
        let terminatingSignal = status & 0x7F
        return terminatingSignal == 0 ? (status >> 8) & 0xFF : 128 + terminatingSignal
    }

    /// Passes a signal on to the child (async-signal-safe: kill(2) only).
    private static let forward: @convention(c) (Int32) -> Void = { number in
        let child = ChildProcess.running
        if child > 0 { _ = kill(child, number) }
    }
}
