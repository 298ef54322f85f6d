import Foundation

/// Runs a shell (bash, zsh, fish) found on `PATH`, for the tests of the completion scripts.
enum ShellProcess {
    /// The shell's path, or `nil` when it is not installed.
    static func path(of shell: String) -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return (directories + ["/usr/bin", "/bin"]).map { "\($0)/\(shell)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Whether the shell is installed.
    static func exists(_ shell: String) -> Bool { path(of: shell) != nil }

    /// What one run printed and its status.
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs `shell ARGUMENTS` with an empty stdin and waits for it.
    static func run(_ shell: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Result {
        guard let path = path(of: shell) else { throw NotInstalled(shell: shell) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe(), errors = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let collected = KcfProcess.Collected()
        let group = DispatchGroup()
        for (index, pipe) in [output, errors].enumerated() {
            group.enter()
            DispatchQueue.global().async {
                collected.set(index, pipe.fileHandleForReading.readDataToEndOfFile())
                group.leave()
            }
        }
        group.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: collected.get(0), as: UTF8.self),
                      stderr: String(decoding: collected.get(1), as: UTF8.self))
    }

    struct NotInstalled: Error, CustomStringConvertible {
        let shell: String
        var description: String { "\(shell) is not installed" }
    }
}
