import Foundation
import Testing

/// Secrets read from stdin are kept whole, as bytes, and printed back exactly.
@Suite("kcf: secrets from stdin and -w output")
struct SecretStdinTests {
    /// A PEM private key (a made-up body: only its shape matters here).
    static let pem = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgevZzL1gdAFr88hb2
        OF/2NxApJCzGCEDdfSp6VQO30hyhRANCAAQRWz+jn65BtOMvdyHKcvjBeBSDZH2r
        1RTwjmYSi9R/zpBnuQ4EiMnCqfMPWiZqB4QdbAd0E7oH50VpuZ1P087G
        -----END PRIVATE KEY-----

        """

    /// Bytes that are not text: NUL, 0xFF, a lone CR, LF inside, invalid UTF-8.
    static let binary: [UInt8] = [0x00, 0xFF, 0x0A, 0x0D, 0x41, 0x00, 0xC3, 0x28, 0x80, 0xFE, 0x0A, 0x42]

    @Test("--secret-stdin and `-w -` store a multi-line PEM whole, after the keychain password's line; -w prints it back")
    func multiLinePEM() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let flag = try sandbox.run(["add-generic-password", "-a", "pem", "-s", "multi", "--secret-stdin"],
                                   stdin: KcfSandbox.password + "\n" + Self.pem)
        #expect(flag.status == 0, "\(flag.stderr)")
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "multi", "-w"]).stdout == Self.pem,
                "the whole PEM, its final newline removed on the way in and printed by -w on the way out")

        let environment = ["KCF_PASSWORD": KcfSandbox.password]
        let dash = try sandbox.run(["add-generic-password", "-a", "pem", "-s", "dash", "-w", "-"], stdin: Self.pem, extra: environment)
        #expect(dash.status == 0, "\(dash.stderr)")
        #expect(try sandbox.run(["find-generic-password", "-s", "dash", "-w"], extra: environment).stdout == Self.pem)
    }

    @Test("a binary secret with NUL and 0xFF bytes round-trips through stdin and -w, -w --hex, -w --base64")
    func binaryRoundTrip() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let environment = ["KCF_PASSWORD": KcfSandbox.password]
        let added = try sandbox.run(["add-generic-password", "-a", "bin", "-s", "binary", "--secret-stdin"],
                                    stdinBytes: Self.binary, extra: environment)
        #expect(added.status == 0, "\(added.stderr)")
        let raw = try sandbox.run(["find-generic-password", "-s", "binary", "-w"], stdinBytes: [], extra: environment)
        #expect(raw.stdoutBytes == Self.binary + [0x0A], "-w writes the bytes exactly, then a newline")
        let hex = try sandbox.run(["find-generic-password", "-s", "binary", "-w", "--hex"], stdinBytes: [], extra: environment)
        #expect(hex.status == 0, "\(hex.stderr)")
        #expect(hex.stdout == "00ff0a0d4100c32880fe0a42\n")
        let base64 = try sandbox.run(["find-generic-password", "-s", "binary", "-w", "--base64"], stdinBytes: [], extra: environment)
        #expect(base64.status == 0, "\(base64.stderr)")
        #expect(base64.stdout == Data(Self.binary).base64EncodedString() + "\n")

        // The same for an internet password, stored with `-w -`.
        let internet = try sandbox.run(["add-internet-password", "-a", "bin", "-s", "example.com", "-w", "-"],
                                       stdinBytes: Self.binary, extra: environment)
        #expect(internet.status == 0, "\(internet.stderr)")
        let found = try sandbox.run(["find-internet-password", "-s", "example.com", "-w", "--base64"], stdinBytes: [], extra: environment)
        #expect(Data(base64Encoded: found.stdout.trimmingCharacters(in: .newlines)).map(Array.init) == Self.binary)

        let alone = try sandbox.run(["find-generic-password", "-s", "binary", "--hex"], stdinBytes: [], extra: environment)
        #expect(alone.status == 2)
        #expect(alone.stderr.contains("--hex and --base64 print the secret of -w"), "\(alone.stderr)")
        let both = try sandbox.run(["find-generic-password", "-s", "binary", "-w", "--hex", "--base64"], stdinBytes: [], extra: environment)
        #expect(both.status == 2)
    }

    @Test("exactly one final \\n or \\r\\n is removed from a secret on stdin; --keep-newline keeps it")
    func trailingNewline() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let environment = ["KCF_PASSWORD": KcfSandbox.password]
        let cases: [(input: String, keep: Bool, stored: String)] = [
            ("pw\n", false, "7077"), ("pw\r\n", false, "7077"), ("pw", false, "7077"), ("pw\n\n", false, "70770a"),
            ("a\nb\n", false, "610a62"), ("pw\n", true, "70770a"), ("pw\r\n", true, "70770d0a"), ("\n", false, ""),
        ]
        for (number, entry) in cases.enumerated() {
            let service = "case\(number)"
            let added = try sandbox.run(["add-generic-password", "-a", "a", "-s", service, "--secret-stdin"] + (entry.keep ? ["--keep-newline"] : []),
                                        stdin: entry.input, extra: environment)
            #expect(added.status == 0, "\(entry.input.debugDescription): \(added.stderr)")
            let hex = try sandbox.run(["find-generic-password", "-s", service, "-w", "--hex"], extra: environment)
            #expect(hex.stdout == entry.stored + "\n", "\(entry.input.debugDescription) keep \(entry.keep)")
        }
        // Nothing at all on stdin is an error, not an empty secret.
        let nothing = try sandbox.run(["add-generic-password", "-a", "a", "-s", "none", "--secret-stdin"], stdin: "", extra: environment)
        #expect(nothing.status == 1)
        #expect(nothing.stderr.contains("no secret on stdin"))
    }
}
