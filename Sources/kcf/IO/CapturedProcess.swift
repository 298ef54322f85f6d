#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A program run to its end with its stdout and stderr captured, its stdin /dev/null: how `kcf import` runs
/// gpg for each file of a password store.
///
/// The program is found on `$PATH` (posix_spawnp) and gets kcf's environment. Both outputs are read as they
/// come (poll(2)), so that neither pipe fills and blocks it. When stdout passes `outputLimit` bytes the
/// program is killed: what it printed is not kept.
enum CapturedProcess {
    /// What a run printed and how it ended.
    struct Result {
        /// The exit status, or 128 + the signal that ended it.
        let status: Int32
        /// Its stdout, empty when it passed the limit.
        var output: [UInt8]
        /// Its stderr (at most `errorLimit` bytes of it).
        let errors: [UInt8]
        /// Whether stdout passed the limit (and the program was killed).
        let exceededLimit: Bool
    }

    /// Why a program could not be run.
    enum Failure: Error {
        /// No such program on `$PATH`.
        case notFound
        /// posix_spawnp or a pipe failed; the system's words.
        case cannotRun(String)
    }

    /// The most bytes of stderr kept.
    static let errorLimit = 65_536

    /// Runs `arguments` (the first looked up in `$PATH`) and waits for it.
    ///
    /// - Throws: ``Failure`` when it cannot be started.
    static func run(_ arguments: [String], outputLimit: Int) throws(Failure) -> Result {
        var output: [Int32] = [-1, -1], errors: [Int32] = [-1, -1]
        guard makePipe(&output), makePipe(&errors) else {
            let reason = SystemError.describe(errno)
            for descriptor in output + errors where descriptor >= 0 { close(descriptor) }
            throw .cannotRun("pipe: \(reason)")
        }
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        var attributes: posix_spawnattr_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
        // kcf ignores SIGPIPE; the program gets the default, as from a shell.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        let argv = arguments.map { strdup($0) }
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv + [nil], environ)
        close(output[1])
        close(errors[1])
        guard spawned == 0 else {
            close(output[0])
            close(errors[0])
            throw spawned == ENOENT ? .notFound : .cannotRun(SystemError.describe(spawned))
        }
        let (stdout, stderr, exceeded) = collect(output: output[0], errors: errors[0], outputLimit: outputLimit, pid: pid)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
        let signal = status & 0x7F
        return Result(status: signal == 0 ? (status >> 8) & 0xFF : 128 + signal, output: exceeded ? [] : stdout,
                      errors: stderr, exceededLimit: exceeded)
    }

    /// Reads both pipes to their ends and closes them; kills `pid` when stdout passes `outputLimit`.
    private static func collect(output: Int32, errors: Int32, outputLimit: Int, pid: pid_t) -> ([UInt8], [UInt8], Bool) {
        var stdout: [UInt8] = [], stderr: [UInt8] = []
        var exceeded = false
        var open = [output, errors]
        var chunk = [UInt8](repeating: 0, count: 65_536)
        defer { wipe(&chunk) }
        while !open.isEmpty {
            var requests = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if poll(&requests, nfds_t(requests.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for request in requests where request.revents != 0 {
                let count = chunk.withUnsafeMutableBytes { read(request.fd, $0.baseAddress, $0.count) }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                guard count > 0 else {
                    close(request.fd)
                    open.removeAll { $0 == request.fd }
                    continue
                }
                if request.fd == output {
                    if !exceeded {
                        stdout.append(contentsOf: chunk[..<count])
                        if stdout.count > outputLimit {
                            exceeded = true
                            wipe(&stdout)
                            stdout = []
                            kill(pid, SIGKILL)
                        }
                    }
                } else if stderr.count < errorLimit {
                    stderr.append(contentsOf: chunk[..<min(count, errorLimit - stderr.count)])
                }
            }
        }
        for descriptor in open { close(descriptor) }
        return (stdout, stderr, exceeded)
    }

    /// A pipe whose two ends are closed on exec (the child gets only the copies made onto 1 and 2).
    private static func makePipe(_ ends: inout [Int32]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        for descriptor in ends { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return true
    }
}
