import Foundation
@_exported import KeychainTestSupport
import Testing

/// Runs the built `kcf` binary with arguments, an environment and stdin, and captures its exit status,
/// stdout and stderr. Secrets are passed through stdin or `KCF_PASSWORD`, never through arguments.
///
/// The binary is built beside the test binary (the test target depends on it); `KCF_BINARY` in the
/// environment names another one. The locator is copied from KeychainFileTests/WorkerProcess.swift.
struct KcfProcess {
    /// What one run of `kcf` did.
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        let stdoutBytes: [UInt8]
    }

    /// The environment a run starts from: the test process's, without the variables kcf reads (so that a
    /// developer's own KCF_PASSWORD or KCF_KEYCHAIN cannot leak in), with HOME and XDG_DATA_HOME pointed into
    /// `home` so that no run touches the real per-user default keychain.
    static func baseEnvironment(home: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["KCF_PASSWORD"] = nil
        environment["KCF_KEYCHAIN"] = nil
        environment["HOME"] = home
        environment["XDG_DATA_HOME"] = home + "/data"
        return environment
    }

    /// Runs `kcf ARGUMENTS` in `directory` (or the current one), writes `stdin` to its standard input and
    /// closes it, and waits (at most `timeout` seconds, then kills it and records an issue).
    static func run(
        _ arguments: [String], stdin: String = "", environment: [String: String], directory: String? = nil,
        timeout: TimeInterval = 60, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Result {
        let process = Process()
        process.executableURL = try executable()
        process.arguments = arguments
        process.environment = environment
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read both outputs on other threads so that a full pipe cannot block the child.
        let collected = Collected()
        let group = DispatchGroup()
        for (index, pipe) in [output, errors].enumerated() {
            group.enter()
            DispatchQueue.global().async {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                collected.set(index, data)
                group.leave()
            }
        }
        // kcf may exit without reading its input (a usage error): a failed write is not the test's concern.
        _ = ignoreBrokenPipes
        try? input.fileHandleForWriting.write(contentsOf: Data(stdin.utf8))
        try? input.fileHandleForWriting.close()
        if group.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            Issue.record("kcf \(arguments.joined(separator: " ")) did not finish in \(Int(timeout)) s", sourceLocation: sourceLocation)
            group.wait()
        }
        process.waitUntilExit()
        let stdoutData = collected.get(0)
        return Result(
            status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self),
            stderr: String(decoding: collected.get(1), as: UTF8.self), stdoutBytes: Array(stdoutData))
    }

    /// Ignores SIGPIPE in the test process, once, so that writing to a kcf that already exited fails with
    /// EPIPE instead of killing the test runner.
    static let ignoreBrokenPipes: Void = {
        _ = signal(SIGPIPE, SIG_IGN)
    }()

    /// Output collected by two reader threads.
    final class Collected: @unchecked Sendable {
        // `@unchecked Sendable`: `parts` is only touched under `lock`.
        private let lock = NSLock()
        private var parts: [Int: Data] = [:]

        func set(_ index: Int, _ data: Data) {
            lock.lock()
            parts[index] = data
            lock.unlock()
        }

        func get(_ index: Int) -> Data {
            lock.lock()
            defer { lock.unlock() }
            return parts[index] ?? Data()
        }
    }

    /// The `kcf` binary: `$KCF_BINARY`, or beside the test binary or bundle.
    static func executable() throws -> URL {
        try BuiltExecutable.locate("kcf", overriddenBy: "KCF_BINARY")
    }
}
