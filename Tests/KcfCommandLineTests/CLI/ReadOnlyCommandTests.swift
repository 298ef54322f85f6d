import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `kcf` on a keychain it can read but not write (SPEC.md §16): on a read-only mount, a file of mode 0400, a
/// directory of mode 0500. Reading commands work; writing commands exit 195 (errSecWrPerm) with "is read-only"
/// on stderr and change nothing.
///
/// Root ignores permission bits, so as root the permission cases run `kcf` as the user nobody (65534) through
/// setpriv(1), and the mount case mounts a tmpfs and remounts it read-only. Where a mechanism is missing (not
/// root and no mount privilege, no setpriv) the test says so as a known issue, loudly, and checks what it can.
@Suite("kcf on a read-only keychain: reads work, writes exit 195 and change nothing", .serialized)
struct ReadOnlyCommandTests {
    static let nobody: uid_t = 65534
    static let setpriv = "/usr/bin/setpriv"

    /// What one run did.
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs `kcf ARGUMENTS` with `stdin`, as the user nobody if `asNobody` (through setpriv), else as this
    /// process's user. Output is small; it is read after the process exits.
    static func kcf(_ arguments: [String], stdin: String, sandbox: KcfSandbox, asNobody: Bool = false) throws -> Run {
        let process = Process()
        let binary = try KcfProcess.executable()
        if asNobody {
            process.executableURL = URL(fileURLWithPath: setpriv)
            process.arguments = ["--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups", "--", binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        process.environment = sandbox.environment
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        try? input.fileHandleForWriting.write(contentsOf: Data(stdin.utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus,
            stdout: String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            stderr: String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    /// Runs a system tool (mount, umount, chown) and returns its status.
    @discardableResult
    static func tool(_ path: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Creates a keychain at `path` with the item a/s = "kept", as this process's user.
    static func makeKeychain(at path: String, sandbox: KcfSandbox) throws {
        let password = KcfSandbox.password + "\n"
        let created = try kcf(["create-keychain", "--insecure-iterations", "1000", path], stdin: password, sandbox: sandbox)
        #expect(created.status == 0, "create-keychain: \(created.stderr)")
        let added = try kcf(["add-generic-password", "-k", path, "-a", "a", "-s", "s", "-w"], stdin: password + "kept\n", sandbox: sandbox)
        #expect(added.status == 0, "add-generic-password: \(added.stderr)")
    }

    /// Checks that the reading commands work on the keychain at `path`, and that every writing command exits 195
    /// with "the keychain at … is read-only" and `because` on stderr, leaving the file's bytes as they were.
    static func expectReadOnly(at path: String, because: String, sandbox: KcfSandbox, asNobody: Bool = false,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let password = KcfSandbox.password + "\n"
        let before = try sandbox.keychainBytes(path)
        let found = try kcf(["find-generic-password", "-k", path, "-a", "a", "-s", "s", "-w"], stdin: password, sandbox: sandbox, asNobody: asNobody)
        #expect(found.status == 0, "find-generic-password: \(found.stderr)", sourceLocation: sourceLocation)
        #expect(found.stdout == "kept\n", sourceLocation: sourceLocation)
        let dumped = try kcf(["dump-keychain", "-k", path], stdin: password, sandbox: sandbox, asNobody: asNobody)
        #expect(dumped.status == 0, "dump-keychain: \(dumped.stderr)", sourceLocation: sourceLocation)
        #expect(dumped.stdout.contains("\"s\""), "dump-keychain: \(dumped.stdout)", sourceLocation: sourceLocation)
        let verified = try kcf(["verify", "-k", path], stdin: password, sandbox: sandbox, asNobody: asNobody)
        #expect(verified.status == 0, "verify: \(verified.stderr)", sourceLocation: sourceLocation)

        let writes: [(arguments: [String], more: String)] = [
            (["add-generic-password", "-k", path, "-a", "b", "-s", "s", "-w"], "new\n"),
            (["add-generic-password", "-k", path, "-a", "a", "-s", "s", "-U", "-w"], "changed\n"),
            (["delete-generic-password", "-k", path, "-a", "a", "-s", "s"], ""),
            (["compact", "-k", path], ""),
            (["change-password", "--insecure-iterations", "1000", "-k", path], "a new password\n"),
        ]
        for (arguments, more) in writes {
            let result = try kcf(arguments, stdin: password + more, sandbox: sandbox, asNobody: asNobody)
            #expect(result.status == 195, "\(arguments[0]) exited \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
            #expect(result.stderr.contains("the keychain at \(path) is read-only: "), "\(arguments[0]): \(result.stderr)",
                    sourceLocation: sourceLocation)
            #expect(result.stderr.contains(because), "\(arguments[0]): \(result.stderr)", sourceLocation: sourceLocation)
        }
        #expect(try sandbox.keychainBytes(path) == before, "a write changed the file", sourceLocation: sourceLocation)
        #expect(try kcf(["find-generic-password", "-k", path, "-a", "a", "-s", "s", "-w"], stdin: password, sandbox: sandbox,
                        asNobody: asNobody).stdout == "kept\n", sourceLocation: sourceLocation)
    }

    /// Whether this process can mount a tmpfs (root on Linux, with mount(8)); otherwise why not.
    static var mountUnavailable: String? {
        #if os(Linux)
        if geteuid() != 0 { return "mounting a read-only tmpfs needs root (euid is \(geteuid()))" }
        if !FileManager.default.isExecutableFile(atPath: "/bin/mount") { return "no /bin/mount" }
        return nil
        #else
        return "mounting a read-only tmpfs is done only on Linux"
        #endif
    }

    /// How the permission cases run `kcf` as a user that permission bits bind, or why they cannot.
    static var otherUser: (asNobody: Bool, unavailable: String?) {
        if geteuid() != 0 { return (false, nil) }
        if FileManager.default.isExecutableFile(atPath: setpriv) { return (true, nil) }
        return (false, "running as root without \(setpriv): permission bits cannot be exercised")
    }

    @Test("On a read-only mount (tmpfs remounted ro), with and without a lock file: reads work, writes exit 195")
    func readOnlyMount() throws {
        if let reason = Self.mountUnavailable {
            withKnownIssue("NOT EXERCISED on this machine: \(reason)") { Issue.record("read-only mount not exercised: \(reason)") }
            return
        }
        let sandbox = try KcfSandbox()
        let mountPoint = sandbox.file("ro-mount")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        try #require(try Self.tool("/bin/mount", ["-t", "tmpfs", "-o", "size=8m,mode=0755", "tmpfs", mountPoint]) == 0, "mount tmpfs")
        defer {
            _ = try? Self.tool("/bin/umount", [mountPoint])
            withExtendedLifetime(sandbox) {}
        }
        let withLock = mountPoint + "/with-lock.kcf"
        let withoutLock = mountPoint + "/without-lock.kcf"
        try Self.makeKeychain(at: withLock, sandbox: sandbox)
        try Self.makeKeychain(at: withoutLock, sandbox: sandbox)
        try FileManager.default.removeItem(atPath: withoutLock + ".lock")
        try #require(try Self.tool("/bin/mount", ["-o", "remount,ro", mountPoint]) == 0, "remount read-only")
        // The mount really is read-only for root.
        #expect(!FileManager.default.createFile(atPath: mountPoint + "/probe", contents: nil))

        try Self.expectReadOnly(at: withLock, because: "EROFS", sandbox: sandbox)
        try Self.expectReadOnly(at: withoutLock, because: "lock file", sandbox: sandbox)
        #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint).sorted()
                == ["with-lock.kcf", "with-lock.kcf.lock", "without-lock.kcf"])
    }

    /// A directory in the sandbox holding a keychain with the item a/s, owned by the user the permission cases
    /// run as (nobody, when root runs the tests).
    static func ownedKeychain(in sandbox: KcfSandbox, asNobody: Bool) throws -> (directory: String, path: String) {
        let directory = sandbox.file("owned")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let path = directory + "/k.kcf"
        try makeKeychain(at: path, sandbox: sandbox)
        if asNobody {
            for item in [directory, path, path + ".lock"] { #expect(chown(item, nobody, nobody) == 0, "chown \(item)") }
            // Nobody must reach the directory through the sandbox (root made it 0755 or tighter).
            #expect(chmod(sandbox.directory, 0o755) == 0)
        }
        return (directory, path)
    }

    @Test("A keychain file of mode 0400 (its directory writable): reads work, writes exit 195")
    func fileMode0400() throws {
        let (asNobody, unavailable) = Self.otherUser
        if let unavailable {
            withKnownIssue("NOT EXERCISED on this machine: \(unavailable)") { Issue.record("mode 0400 not exercised: \(unavailable)") }
            return
        }
        let sandbox = try KcfSandbox()
        let (_, path) = try Self.ownedKeychain(in: sandbox, asNobody: asNobody)
        #expect(chmod(path, 0o400) == 0)
        try Self.expectReadOnly(at: path, because: "cannot be opened for writing", sandbox: sandbox, asNobody: asNobody)
    }

    @Test("A keychain in a directory of mode 0500 without a lock file: reads work without one, writes exit 195")
    func readOnlyDirectory() throws {
        let (asNobody, unavailable) = Self.otherUser
        if let unavailable {
            withKnownIssue("NOT EXERCISED on this machine: \(unavailable)") { Issue.record("read-only directory not exercised: \(unavailable)") }
            return
        }
        let sandbox = try KcfSandbox()
        let (directory, path) = try Self.ownedKeychain(in: sandbox, asNobody: asNobody)
        try FileManager.default.removeItem(atPath: path + ".lock")
        #expect(chmod(directory, 0o500) == 0)
        defer { _ = chmod(directory, 0o700) }
        try Self.expectReadOnly(at: path, because: "lock file", sandbox: sandbox, asNobody: asNobody)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["k.kcf"])
    }
}
