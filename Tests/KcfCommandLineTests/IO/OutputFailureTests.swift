import Foundation
import Testing

/// What `kcf` does when what it prints cannot be written: never exit 0 as if the output had arrived.
@Suite("kcf: output that cannot be written")
struct OutputFailureTests {
    /// A sandbox keychain with one generic password, "A"/"S", whose secret is `secret`.
    static func sandbox(secret: String = "the secret") throws -> KcfSandbox {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "A", service: "S", secret: secret)
        return sandbox
    }

    #if os(Linux)
    @Test("a secret or a dump written to a full disk (/dev/full) exits 4 with the reason on stderr")
    func fullDisk() throws {
        let sandbox = try Self.sandbox()
        let password = Array((KcfSandbox.password + "\n").utf8)
        let secret = try sandbox.run(["find-generic-password", "-a", "A", "-s", "S", "-w"], stdinBytes: password,
                                     stdout: .file("/dev/full"))
        #expect(secret.status == 4, "\(secret.stderr)")
        #expect(secret.stderr.contains("kcf: find-generic-password: cannot write to stdout"))
        #expect(secret.stderr.contains("errno 28"), "the reason is ENOSPC: \(secret.stderr)")

        let dump = try sandbox.run(["dump-keychain", "--json", "-d", "--yes"], stdinBytes: password, stdout: .file("/dev/full"))
        #expect(dump.status == 4, "\(dump.stderr)")
        #expect(dump.stderr.contains("kcf: dump-keychain: cannot write to stdout"))
    }

    @Test("a message that cannot be written to stderr fails a command that would succeed, and keeps a failure's own status")
    func fullStderr() throws {
        let sandbox = try Self.sandbox()
        let password = Array((KcfSandbox.password + "\n").utf8)
        // -g prints the attributes on stdout and the secret on stderr.
        let shown = try sandbox.run(["find-generic-password", "-a", "A", "-g"], stdinBytes: password, stderr: .file("/dev/full"))
        #expect(shown.status == 4)
        #expect(shown.stdout.contains("\"acct\"<blob>=\"A\""))
        let missing = try sandbox.run(["find-generic-password", "-a", "nobody"], stdinBytes: password, stderr: .file("/dev/full"))
        #expect(missing.status == 44, "not found stays 44 when its message cannot be written")
    }
    #endif

    @Test("a closed pipe on stdout (kcf … | head -c 0) exits 4 with a message, not 0 and not killed by SIGPIPE")
    func closedPipe() throws {
        let sandbox = try Self.sandbox()
        let password = Array((KcfSandbox.password + "\n").utf8)
        let dump = try sandbox.run(["dump-keychain", "--json", "-d", "--yes"], stdinBytes: password, stdout: .brokenPipe)
        #expect(dump.status == 4, "\(dump.stderr)")
        #expect(dump.stderr.contains("kcf: dump-keychain: cannot write to stdout"))
        let secret = try sandbox.run(["find-generic-password", "-a", "A", "-w"], stdinBytes: password, stdout: .brokenPipe)
        #expect(secret.status == 4, "\(secret.stderr)")
    }

    @Test("with stdout closed (>&-) kcf exits 4, and the secret does not land in a file it opened")
    func closedStdout() throws {
        let sandbox = try Self.sandbox(secret: "plaintext-secret-bytes")
        let keychainBefore = try sandbox.keychainBytes()
        let result = try sandbox.run(["find-generic-password", "-a", "A", "-w"],
                                     stdinBytes: Array((KcfSandbox.password + "\n").utf8), stdout: .closed)
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains("cannot write to stdout"))
        let secret = Array("plaintext-secret".utf8)
        for path in [sandbox.keychain, sandbox.keychain + ".lock"] {
            let bytes = try sandbox.keychainBytes(path)
            let leaked = bytes.count >= secret.count
                && (0...(bytes.count - secret.count)).contains { Array(bytes[$0..<($0 + secret.count)]) == secret }
            #expect(!leaked, "the secret was written into \(path)")
        }
        #expect(try sandbox.keychainBytes() == keychainBefore)
        #expect(try sandbox.unlocked(["verify"]).status == 0)
    }
}
