#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `kcf` writes: results to stdout, prompts, warnings and errors to stderr.
///
/// Writes go straight to the file descriptors with write(2), unbuffered, so that the two streams interleave
/// in the order written. Every write is checked. The first one that fails on a stream (a full disk, a closed
/// pipe, a stream closed before `kcf` started) is kept in ``failures``, and later writes to that stream are
/// dropped, so that a reader never gets output with a hole in it; ``Runner`` turns a failure into exit
/// status 4 (``ExitStatus/outputFailed``) and says why on stderr.
///
/// The state is global and unsynchronised: `kcf` writes only from its main thread.
enum Output {
    /// Writes `text` and a newline to stdout.
    static func line(_ text: String = "") {
        write(Array((text + "\n").utf8), to: .output)
    }

    /// Writes `bytes` as they are to stdout (a secret that is not text).
    static func bytes(_ bytes: [UInt8]) {
        write(bytes, to: .output)
    }

    /// Writes `text` and a newline to stderr.
    static func error(_ text: String) {
        write(Array((text + "\n").utf8), to: .error)
    }

    /// Writes `text` as it is to stderr (a prompt).
    static func prompt(_ text: String) {
        write(Array(text.utf8), to: .error)
    }

    /// Writes `text` as it is to stderr: a progress line (``ProgressReporter``), redrawn after a carriage return.
    static func progress(_ text: String) {
        write(Array(text.utf8), to: .error)
    }

    /// The failed writes so far: at most one a stream, the first.
    static var failures: [OutputFailure] {
        StandardStream.allCases.compactMap { failure(of: $0) }
    }

    /// Makes the standard streams safe to use; call it first, before any file is opened.
    ///
    /// - SIGPIPE is ignored, so that writing to a closed pipe fails with EPIPE (reported, exit status 4)
    ///   instead of killing the process without a word.
    /// - A standard descriptor that is closed (`kcf … >&-`) is filled with /dev/null, opened read-only, so that
    ///   the keychain or its lock file cannot be opened under number 1 or 2 and receive what is printed (or
    ///   under 0 and be read as a password). Writes to a stream that was closed fail as any failed write.
    static func prepare() {
        _ = signal(SIGPIPE, SIG_IGN)
        for descriptor: Int32 in 0...2 {
            guard fcntl(descriptor, F_GETFD) == -1, errno == EBADF else { continue }
            if let stream = StandardStream.allCases.first(where: { $0.descriptor == descriptor }) { closedAtStart[stream] = true }
            let placeholder = open("/dev/null", O_RDONLY)
            if placeholder >= 0 && placeholder != descriptor {
                _ = dup2(placeholder, descriptor)
                _ = close(placeholder)
            }
        }
    }

    /// Ends the output: closes stdout, which reports a write the system had accepted but could not complete
    /// (a network file system can say so only then), and returns ``failures``.
    static func finish() -> [OutputFailure] {
        if failure(of: .output) == nil && closedAtStart[.output] != true {
            if close(StandardStream.output.descriptor) != 0 && errno != EINTR {
                record(OutputFailure(stream: .output, reason: SystemError.describe(errno)))
            }
        }
        return failures
    }

    private static func write(_ bytes: [UInt8], to stream: StandardStream) {
        guard failure(of: stream) == nil, !bytes.isEmpty else { return }
        if closedAtStart[stream] == true {
            record(OutputFailure(stream: stream, reason: "it was closed when kcf started"))
        } else if let reason = writeAll(bytes, to: stream.descriptor) {
            record(OutputFailure(stream: stream, reason: reason))
        }
    }

    /// Writes all of `bytes`, retrying after short writes, EINTR, and EAGAIN (a non-blocking descriptor, after
    /// waiting until it takes more); returns why it failed, or `nil`.
    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> String? {
        bytes.withUnsafeBytes { buffer -> String? in
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                    continue
                }
                if written == 0 { return "write(2) wrote nothing" }
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK, waitUntilWritable(descriptor) { continue }
                return SystemError.describe(code)
            }
            return nil
        }
    }

    /// Waits with poll(2) until `descriptor` takes more bytes; `false` if poll fails.
    private static func waitUntilWritable(_ descriptor: Int32) -> Bool {
        var request = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        while true {
            if poll(&request, 1, -1) >= 0 { return true }
            if errno != EINTR { return false }
        }
    }

    private static func failure(of stream: StandardStream) -> OutputFailure? {
        firstFailures[stream]
    }

    private static func record(_ failure: OutputFailure) {
        if firstFailures[failure.stream] == nil { firstFailures[failure.stream] = failure }
    }

    /// The first failed write of each stream. `nonisolated(unsafe)`: only kcf's main thread writes output.
    nonisolated(unsafe) private static var firstFailures: [StandardStream: OutputFailure] = [:]
    /// The streams whose descriptor was closed when kcf started. Main thread only, as ``firstFailures``.
    nonisolated(unsafe) private static var closedAtStart: [StandardStream: Bool] = [:]
}

/// write(2), under a name that does not clash with ``Output``'s own methods.
private func systemWrite(_ descriptor: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, pointer, count)
}
