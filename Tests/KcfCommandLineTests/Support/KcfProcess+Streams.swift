import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension KcfProcess {
    /// Where a run's stdout or stderr goes, for the tests of what `kcf` does when it cannot write.
    enum Stream {
        /// A pipe the test reads to the end (the result's `stdout` or `stderr`).
        case captured
        /// A file opened for writing, such as `/dev/full` (every write fails with ENOSPC).
        case file(String)
        /// A pipe whose read end is closed before `kcf` starts: every write fails with EPIPE (or raises
        /// SIGPIPE), as in `kcf … | head -c 0`.
        case brokenPipe
        /// No descriptor at all, as `kcf … >&-` leaves it.
        case closed
    }

    /// Runs `kcf ARGUMENTS` with posix_spawn(2), so that stdout and stderr can be what ``Stream`` says, with
    /// `stdin` written to its standard input and SIGPIPE at its default action in the child (the test runner
    /// ignores it, and an ignored signal would be inherited). A child killed by a signal has status
    /// 128 + the signal, as a shell reports it.
    static func run(
        _ arguments: [String], stdin: [UInt8], environment: [String: String], stdout: Stream, stderr: Stream = .captured,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Result {
        let path = try executable().path
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
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        let input = try makePipe()
        posix_spawn_file_actions_adddup2(&actions, input.read, 0)
        // Every end is close-on-exec: the child keeps only the copies made by dup2 onto 0, 1 and 2.
        var parentEnds = [input.write]
        var childEnds = [input.read]     // closed in the parent once the child runs
        var readers: [(stream: Int, descriptor: Int32)] = []
        for (number, stream) in [(1, stdout), (2, stderr)] {
            switch stream {
            case .captured:
                let pipe = try makePipe()
                posix_spawn_file_actions_adddup2(&actions, pipe.write, Int32(number))
                parentEnds.append(pipe.read)
                childEnds.append(pipe.write)
                readers.append((number, pipe.read))
            case .file(let file):
                posix_spawn_file_actions_addopen(&actions, Int32(number), file, O_WRONLY, 0)
            case .brokenPipe:
                let pipe = try makePipe()
                close(pipe.read)
                posix_spawn_file_actions_adddup2(&actions, pipe.write, Int32(number))
                childEnds.append(pipe.write)
            case .closed:
                posix_spawn_file_actions_addclose(&actions, Int32(number))
            }
        }

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        for descriptor in childEnds { close(descriptor) }
        guard spawned == 0 else {
            for descriptor in parentEnds { close(descriptor) }
            throw SpawnError(operation: "posix_spawn", code: spawned)
        }

        let collected = Collected()
        let group = DispatchGroup()
        for reader in readers {
            group.enter()
            DispatchQueue.global().async {
                let handle = FileHandle(fileDescriptor: reader.descriptor, closeOnDealloc: true)
                collected.set(reader.stream, handle.readDataToEndOfFile())
                group.leave()
            }
        }
        _ = ignoreBrokenPipes
        let stdinHandle = FileHandle(fileDescriptor: input.write, closeOnDealloc: true)
        try? stdinHandle.write(contentsOf: Data(stdin))
        try? stdinHandle.close()
        if group.wait(timeout: .now() + 60) == .timedOut {
            kill(pid, SIGKILL)
            Issue.record("kcf \(arguments.joined(separator: " ")) did not finish in 60 s", sourceLocation: sourceLocation)
            group.wait()
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw SpawnError(operation: "waitpid", code: errno) }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
        let signal = status & 0x7F
        let exitStatus = signal == 0 ? (status >> 8) & 0xFF : 128 + signal
        let stdoutData = collected.get(1)
        return Result(
            status: exitStatus, stdout: String(decoding: stdoutData, as: UTF8.self),
            stderr: String(decoding: collected.get(2), as: UTF8.self), stdoutBytes: Array(stdoutData))
    }

    /// A pipe whose ends are closed on exec, so that other children the test runner starts do not keep them
    /// (a read end held elsewhere would keep a "broken" pipe working). pipe2(2) is not imported, hence fcntl.
    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw SpawnError(operation: "pipe", code: errno) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    /// A system call of ``run(_:stdin:environment:stdout:stderr:sourceLocation:)`` failed.
    struct SpawnError: Error, CustomStringConvertible {
        let operation: String
        let code: Int32
        var description: String { "\(operation) failed: errno \(code)" }
    }
}
