import Foundation
import Testing

/// A `kcf-worker` child process (Sources/kcf-worker), its stdout and stderr captured in files.
///
/// The worker binary is built beside the test binary (the test target depends on it); `KCF_WORKER` in the
/// environment names another one.
final class WorkerProcess {
    /// The password every worker is given through `KCF_WORKER_PASSWORD`; the keychains the tests hand to
    /// workers are created with it.
    static let password = "multi-process password"

    let arguments: [String]
    private let process = Process()
    private let outputPath: String
    private let errorPath: String

    /// Starts `kcf-worker ARGUMENTS` with `password` in its environment (none if `nil`), writing its output to
    /// files in `directory`.
    init(_ arguments: [String], in directory: TemporaryDirectory, password: String? = WorkerProcess.password) throws {
        self.arguments = arguments
        let name = "worker-\(UUID().uuidString)"
        outputPath = directory.file(name + ".out")
        errorPath = directory.file(name + ".err")
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        process.executableURL = try Self.executable()
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["KCF_WORKER_PASSWORD"] = password
        process.environment = environment
        guard let output = FileHandle(forWritingAtPath: outputPath), let errors = FileHandle(forWritingAtPath: errorPath) else {
            throw LocateError.cannotCapture(directory.path)
        }
        defer {
            try? output.close()
            try? errors.close()
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Waits for the worker to exit and returns its status; kills it and returns `nil` after `timeout`
    /// seconds, so that a deadlock fails the test instead of hanging it.
    func wait(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline {
                process.terminate()
                process.waitUntilExit()
                return nil
            }
            usleep(5_000)
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// The lines the worker printed to stdout so far.
    var outputLines: [String] { Self.lines(of: outputPath) }

    /// What the worker printed to stderr so far.
    var errorText: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// Waits for a worker and records an issue unless it exited with status 0 and printed nothing to
    /// stderr. Returns its stdout lines.
    @discardableResult
    func expectSuccess(timeout: TimeInterval = 60, sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        let status = wait(timeout: timeout)
        let command = arguments.joined(separator: " ")
        if status == nil {
            Issue.record("kcf-worker \(command) did not finish in \(Int(timeout)) s", sourceLocation: sourceLocation)
        } else if status != 0 {
            Issue.record("kcf-worker \(command) exited with \(status!): \(errorText)", sourceLocation: sourceLocation)
        } else if !errorText.isEmpty {
            Issue.record("kcf-worker \(command) wrote to stderr: \(errorText)", sourceLocation: sourceLocation)
        }
        return outputLines
    }

    /// Runs a worker to completion and returns its stdout lines (recording an issue if it failed).
    @discardableResult
    static func run(_ arguments: [String], in directory: TemporaryDirectory, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        try WorkerProcess(arguments, in: directory).expectSuccess(sourceLocation: sourceLocation)
    }

    private static func lines(of path: String) -> [String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    enum LocateError: Error, CustomStringConvertible {
        case cannotCapture(String)
        var description: String {
            switch self {
            case .cannotCapture(let directory): return "cannot create the worker's output files in \(directory)"
            }
        }
    }

    /// The `kcf-worker` binary: `$KCF_WORKER`, or beside the test binary or bundle.
    static func executable() throws -> URL {
        try BuiltExecutable.locate("kcf-worker", overriddenBy: "KCF_WORKER")
    }
}
