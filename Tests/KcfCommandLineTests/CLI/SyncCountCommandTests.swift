import Foundation
import Testing

/// How many times a durable add syncs, counted on the real system calls (strace): a version 2 keychain commits in
/// its file alone (record and commit slot, one flush); a version 1 keychain also acknowledges the commit in the lock
/// file (SPEC.md §16.1), a second flush. A sync more than that is time every add pays.
@Suite("kcf: the flushes of a durable add")
struct SyncCountCommandTests {
    /// The fsync(2) and fdatasync(2) calls `kcf ARGUMENTS` makes, with `stdin` on its standard input.
    static func syncs(_ arguments: [String], stdin: String, sandbox: KcfSandbox) throws -> [String] {
        let trace = sandbox.file("strace.txt")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: UnconfirmedDurabilityCommandTests.strace)
        process.arguments = ["-f", "-qq", "-o", trace, "-e", "trace=fsync,fdatasync", try KcfProcess.executable().path] + arguments
        process.environment = sandbox.environment
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data(stdin.utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map(String.init)
            .filter { $0.contains("fsync(") || $0.contains("fdatasync(") }
    }

    @Test("An add to a version 2 keychain flushes once; to a version 1 keychain twice (the file, the lock file's acknowledgement)",
          arguments: [(2, 1), (1, 2)])
    func addFlushes(formatVersion: Int, expected: Int) throws {
        #if os(Linux)
        try #require(FileManager.default.isExecutableFile(atPath: UnconfirmedDurabilityCommandTests.strace), "strace is needed")
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain(formatVersion: formatVersion)
        try sandbox.addGeneric(account: "ann", service: "first", secret: "1")
        for index in 0..<3 {
            let syncs = try Self.syncs(["add-generic-password", "-a", "ann", "-s", "s\(index)", "-w", "-"],
                                       stdin: KcfSandbox.password + "\nsecret\n", sandbox: sandbox)
            #expect(syncs.count == expected, "add \(index): \(syncs)")
        }
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "s2", "-w"]).stdout == "secret\n")
        #endif
    }
}
