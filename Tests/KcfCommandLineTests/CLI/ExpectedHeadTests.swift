import Foundation
import Testing

/// `--expected-head`: refusing a keychain file rolled back to an older copy (SPEC.md §15.4).
@Suite("kcf: --expected-head")
struct ExpectedHeadTests {
    /// The head `kcf verify` prints on its `records:` line.
    static func head(_ sandbox: KcfSandbox, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let verified = try sandbox.unlocked(["verify"], sourceLocation: sourceLocation)
        let line = try #require(verified.stdout.split(separator: "\n").first { $0.hasPrefix("records:") },
                                sourceLocation: sourceLocation)
        return String(try #require(line.split(separator: " ").last, sourceLocation: sourceLocation))
    }

    @Test("a rolled-back copy exits 32 against a pinned head, also one read back with its newline; a malformed pin exits 2",
          arguments: [1, 2])
    func rolledBack(formatVersion: Int) throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain(formatVersion: formatVersion)
        try sandbox.addGeneric(account: "ann", service: "first", secret: "1")
        let older = try sandbox.keychainBytes()
        let olderHead = try Self.head(sandbox)
        try sandbox.addGeneric(account: "ann", service: "second", secret: "2")
        let pin = try Self.head(sandbox)
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "second", "--expected-head", pin]).status == 0)

        try Data(older).write(to: URL(fileURLWithPath: sandbox.keychain))
        for text in [pin, pin + "\n", " \t" + pin + "\r\n"] {
            let refused = try sandbox.unlocked(["find-generic-password", "-s", "first", "--expected-head", text])
            #expect(refused.status == 32, "\(text.debugDescription): \(refused.stderr)")
            #expect(refused.stderr.contains("rolled back"))
            #expect(refused.stdout.isEmpty)
        }
        #expect(try sandbox.unlocked(["dump-keychain", "--expected-head", pin]).status == 32)
        // Version 1: the lock file's acknowledgement (SPEC.md §16.1) refuses the older copy even without a pin;
        // whoever puts an older copy back on purpose removes the lock file with it. Version 2 writes no
        // acknowledgement there (§26.2): only a pin detects its rollback.
        let unpinned = try sandbox.unlocked(["find-generic-password", "-s", "first"])
        if formatVersion == 1 {
            #expect(unpinned.status == 32)
            #expect(unpinned.stderr.contains("acknowledged more than the keychain file holds"), "\(unpinned.stderr)")
        } else {
            #expect(unpinned.status == 0, "\(unpinned.stderr)")
        }
        try FileManager.default.removeItem(atPath: sandbox.keychain + ".lock")
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "first", "--expected-head", olderHead]).status == 0)
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "first", "--expected-head", pin]).status == 32)

        for malformed in ["", "garbage", pin + ".1", String(pin.dropLast()), String(pin.dropLast()) + "g", "+" + pin] {
            let result = try sandbox.unlocked(["find-generic-password", "-s", "first", "--expected-head", malformed])
            #expect(result.status == 2, "\(malformed.debugDescription): \(result.stderr)")
            #expect(result.stderr.contains("--expected-head"), "\(result.stderr)")
        }
    }
}
