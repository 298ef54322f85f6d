import Foundation

/// A `kcf-worker chaos` child whose stdout the parent reads line by line as it is written, so that it can
/// kill the child with SIGKILL at a chosen moment: after a delay, or right after a given `begin` line.
final class ChaosWorkerProcess {
    /// When to kill the worker.
    enum KillPlan: CustomStringConvertible {
        /// Let it finish.
        case never
        /// SIGKILL this many microseconds after it was started.
        case afterDelay(microseconds: Int)
        /// SIGKILL this many microseconds after reading the `nth` `begin` line of a step of `kind` (any step
        /// if `nil`; "compact", "credential", "batch", "op").
        case afterBegin(kind: String?, nth: Int, microseconds: Int)

        var description: String {
            switch self {
            case .never: return "no kill"
            case .afterDelay(let delay): return "kill \(delay) µs after the start"
            case .afterBegin(let kind, let nth, let delay): return "kill \(delay) µs after begin #\(nth) of \(kind ?? "any step")"
            }
        }
    }

    /// How the run ended.
    struct Outcome {
        /// Every complete line the worker wrote, read to the end after it died.
        var lines: [String]
        /// Whether the parent sent SIGKILL (the worker may have exited just before).
        var killed: Bool
        /// The exit status, or the signal number if a signal ended it.
        var status: Int32
        var endedBySignal: Bool
        var errorText: String
        /// The worker had not ended after the deadline and was killed for it.
        var timedOut: Bool
    }

    private let process = Process()
    private let output = Pipe()
    private let errorPath: String
    private var pending: [UInt8] = []
    private var lines: [String] = []
    private var endOfOutput = false

    init(arguments: [String], passwords: (String, String), in directory: TemporaryDirectory) throws {
        errorPath = directory.file("chaos-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        guard let errors = FileHandle(forWritingAtPath: errorPath) else { throw WorkerProcess.LocateError.cannotCapture(directory.path) }
        defer { try? errors.close() }
        process.executableURL = try WorkerProcess.executable()
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["KCF_WORKER_PASSWORD"] = passwords.0
        environment["KCF_WORKER_PASSWORD2"] = passwords.1
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // The child has its copy; without closing ours the pipe never reports the end of the output.
        try? output.fileHandleForWriting.close()
    }

    /// Runs the plan, then reads the rest of the output and waits for the worker to end.
    func run(_ plan: KillPlan, deadline seconds: TimeInterval = 120) -> Outcome {
        let start = Date()
        let deadline = start.addingTimeInterval(seconds)
        var killed = false
        switch plan {
        case .never:
            break
        case .afterDelay(let microseconds):
            let moment = start.addingTimeInterval(Double(microseconds) / 1e6)
            while !endOfOutput && Date() < moment { readAvailable(until: moment) }
            if !endOfOutput { kill(); killed = true }
        case .afterBegin(let kind, let nth, let microseconds):
            var seen = 0
            var checked = 0
            while !endOfOutput && Date() < deadline && !killed {
                readAvailable(until: deadline)
                while checked < lines.count {
                    defer { checked += 1 }
                    guard Self.isBegin(lines[checked], of: kind) else { continue }
                    seen += 1
                    if seen == nth {
                        if microseconds > 0 { usleep(UInt32(microseconds)) }
                        kill()
                        killed = true
                        break
                    }
                }
            }
        }
        while !endOfOutput && Date() < deadline { readAvailable(until: deadline) }
        let timedOut = !endOfOutput
        if timedOut { kill() }
        process.waitUntilExit()
        while !endOfOutput { readAvailable(until: Date().addingTimeInterval(1)) }
        return Outcome(
            lines: lines, killed: killed, status: process.terminationStatus,
            endedBySignal: process.terminationReason == .uncaughtSignal,
            errorText: (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "", timedOut: timedOut)
    }

    private func kill() {
        _ = Foundation.kill(process.processIdentifier, SIGKILL)
    }

    private static func isBegin(_ line: String, of kind: String?) -> Bool {
        let words = line.split(separator: " ", maxSplits: 3)
        guard words.count >= 3, words[0] == "begin" else { return false }
        return kind == nil || words[2] == kind!
    }

    /// Reads what the pipe has, waiting at most until `moment` for something to arrive.
    private func readAvailable(until moment: Date) {
        let descriptor = output.fileHandleForReading.fileDescriptor
        let milliseconds = max(0, Int32(min(moment.timeIntervalSinceNow * 1000, 1000).rounded(.up)))
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, milliseconds) > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count <= 0 {
            if count == 0 || errno != EINTR { endOfOutput = true }
            return
        }
        pending += buffer[0..<count]
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: pending[..<newline], as: UTF8.self))
            pending.removeSubrange(...newline)
        }
    }
}
