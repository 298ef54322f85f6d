import Foundation
import Testing
@testable import KeychainFile
#if canImport(Glibc)
import Glibc
#endif

/// Issue 31's proof for memory (Docs/FormatVersion3.md §2.3): a kcf process that opened the keychain with a credential
/// scoped to group A, and read an item of A, holds nothing of group B's items anywhere in its memory — not B's secret,
/// not B's account — because it never held B's key. The same search over a process that opened the file with the
/// full password finds B's account: the search finds what is there.
@Suite("A process holding a credential scoped to one access group has nothing of another group's items in its memory", .enabled(if: ProcessMemory.readable))
struct ScopedCredentialMemoryTests {
    static let groupA = ScopedCredentialCommandTests.groupA
    static let groupB = ScopedCredentialCommandTests.groupB
    static let scopedPassword = "scoped to group a"
    static let secretOfA = "A-secret-0c44e1b9-read-by-the-run"
    static let secretOfB = "B-secret-7f3a9c21-never-decrypted-by-a"
    static let accountOfB = "b-account-5e8d12aa-in-b-only"

    /// A version 3 keychain with an item in A and one in B, and a password scoped to A.
    static func sandbox() throws -> KcfSandbox {
        let (sandbox, keychain) = try ScopedCredentialCommandTests.sandbox(items: [(groupA, "a", secretOfA), (groupB, accountOfB, secretOfB)])
        try keychain.addCredential(.password(scopedPassword), scope: .groups([groupA]), keyDerivation: .pbkdf2(.insecureForTesting(1_000)))
        return sandbox
    }

    /// Runs `kcf run --env X=svc/a -- sh -c 'echo ready; read line'` with `password`, and, once the command has
    /// started (kcf opened the keychain and read A's item), searches kcf's memory for each of `needles`.
    static func searchMemoryOfRun(_ sandbox: KcfSandbox, password: String, for needles: [String]) throws -> [String: Bool] {
        let process = Process()
        process.executableURL = try KcfProcess.executable()
        process.arguments = ["run", "--env", "X=svc/a", "--", "sh", "-c", "echo ready; read line"]
        var environment = sandbox.environment
        environment["KCF_PASSWORD"] = password
        environment["KCF_KEYCHAIN"] = sandbox.keychain
        process.environment = environment
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            try? input.fileHandleForWriting.write(contentsOf: Data("go\n".utf8))
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        var said = Data()
        while !said.contains(UInt8(ascii: "\n")) {
            let more = output.fileHandleForReading.availableData
            guard !more.isEmpty else { break }
            said += more
        }
        #expect(String(decoding: said, as: UTF8.self) == "ready\n", "the command did not start")
        return try ProcessMemory.contains(needles.map { Array($0.utf8) }, inProcess: process.processIdentifier)
            .reduce(into: [:]) { $0[String(decoding: $1.key, as: UTF8.self)] = $1.value }
    }

    @Test("kcf run with the password scoped to A: A's secret is in its memory, B's secret and account are not; with the full password B's account is")
    func nothingOfBInMemory() throws {
        let sandbox = try Self.sandbox()
        let needles = [Self.secretOfA, Self.secretOfB, Self.accountOfB]
        let scoped = try Self.searchMemoryOfRun(sandbox, password: Self.scopedPassword, for: needles)
        #expect(scoped[Self.secretOfA] == true, "the search did not find A's secret, which the run read: it cannot be trusted")
        #expect(scoped[Self.secretOfB] == false, "B's secret is in the memory of a process scoped to A")
        #expect(scoped[Self.accountOfB] == false, "B's account is in the memory of a process scoped to A")
        let full = try Self.searchMemoryOfRun(sandbox, password: KcfSandbox.password, for: needles)
        #expect(full[Self.accountOfB] == true, "the full holder's process shows no trace of B's account: the search cannot see what a process holds")
    }
}

/// Reading another process's memory through /proc (Linux): every readable mapping, as the kernel lets a parent read
/// its child's.
enum ProcessMemory {
    /// Whether this system lets the test read a child's memory (/proc/PID/mem of a child it started).
    static let readable: Bool = {
        #if os(Linux)
        return FileManager.default.isReadableFile(atPath: "/proc/self/mem")
        #else
        return false
        #endif
    }()

    /// For each needle, whether it occurs in any readable mapping of process `pid`.
    static func contains(_ needles: [[UInt8]], inProcess pid: Int32) throws -> [[UInt8]: Bool] {
        var found = Dictionary(uniqueKeysWithValues: needles.map { ($0, false) })
        #if os(Linux)
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        let descriptor = open("/proc/\(pid)/mem", O_RDONLY)
        guard descriptor >= 0 else { throw CocoaError(.fileReadNoPermission) }
        defer { close(descriptor) }
        let overlap = (needles.map(\.count).max() ?? 1) - 1
        let chunk = 1 << 20
        var readRegions = 0
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("r") else { continue }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt64(bounds[0], radix: 16), let end = UInt64(bounds[1], radix: 16) else { continue }
            var position = start
            var carried: [UInt8] = []
            while position < end {
                let count = Int(min(UInt64(chunk), end - position))
                var buffer = [UInt8](repeating: 0, count: count)
                let read = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(Int64(bitPattern: position))) }
                guard read > 0 else { break }
                let window = Data(carried + buffer[0..<read])
                for needle in needles where found[needle] == false && window.range(of: Data(needle)) != nil { found[needle] = true }
                carried = Array(window.suffix(overlap))
                position += UInt64(read)
                readRegions += 1
            }
        }
        #expect(readRegions > 0, "no mapping of process \(pid) could be read")
        #endif
        return found
    }
}
