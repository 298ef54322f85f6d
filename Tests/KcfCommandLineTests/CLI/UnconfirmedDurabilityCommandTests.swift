import Foundation
import Testing

/// `kcf` with real system calls failing (strace's fault injection): a change that took effect but whose
/// durability could not be confirmed exits 6 and says so, never the plain I/O failure (220) it used to.
@Suite("kcf: changes in effect without confirmed durability")
struct UnconfirmedDurabilityCommandTests {
    static let strace = "/usr/bin/strace"

    /// Runs `kcf ARGUMENTS` under strace with every fsync(2) failing with EIO (the keychain syncs files with
    /// fdatasync(2) on Linux and only directories with fsync(2)), `stdin` on its standard input.
    static func runFailingDirectorySync(_ arguments: [String], stdin: String, sandbox: KcfSandbox) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: strace)
        process.arguments = ["-f", "-qq", "-o", "/dev/null", "-e", "trace=fsync", "-e", "inject=fsync:error=EIO", try KcfProcess.executable().path]
            + arguments
        process.environment = sandbox.environment
        let input = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data(stdin.utf8))
        try input.fileHandleForWriting.close()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, stderr)
    }

    @Test("change-password and create-keychain whose directory fsync fails exit 6, and the change is in force")
    func directorySyncFails() throws {
        #if os(Linux)
        try #require(FileManager.default.isExecutableFile(atPath: Self.strace), "strace is needed for fault injection")
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "s", secret: "kept")
        let change = try Self.runFailingDirectorySync(
            ["change-password", "--insecure-argon2id", "64"], stdin: KcfSandbox.password + "\nnew password\nnew password\n",
            sandbox: sandbox)
        #expect(change.status == 6, "\(change.stderr)")
        #expect(change.stderr.contains("took effect, but could not be confirmed durable"), "\(change.stderr)")
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "s", "-w"]).status == 51)
        let withNew = try sandbox.run(["find-generic-password", "-s", "s", "-w"], stdin: "new password\n")
        #expect(withNew.stdout == "kept\n", "\(withNew.stderr)")

        let created = sandbox.file("created.kcf")
        let create = try Self.runFailingDirectorySync(
            ["create-keychain", "--insecure-iterations", "1000", created], stdin: "pw\npw\n", sandbox: sandbox)
        #expect(create.status == 6, "\(create.stderr)")
        #expect(try sandbox.run(["verify", created], stdin: "pw\n").status == 0)
        #endif
    }
}
