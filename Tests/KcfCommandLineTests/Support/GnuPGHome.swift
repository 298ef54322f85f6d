import Foundation
import Testing

/// A throwaway GnuPG home with one key without a passphrase, for the tests of `kcf import -f pass`: made with
/// the real gpg, which encrypts the store's files as `pass insert` does. Its agent is stopped when the home
/// is dropped.
final class GnuPGHome {
    /// Whether gpg (and gpgconf, which stops its agent) are installed.
    static var isAvailable: Bool { ShellProcess.exists("gpg") && ShellProcess.exists("gpgconf") }

    /// The key's user id, which the files are encrypted to.
    static let recipient = "kcf-test@example.invalid"

    let directory: String
    /// The environment gpg runs in: the test's, with GNUPGHOME set.
    let environment: [String: String]

    /// Makes the home in `parent` and a key in it.
    init(in parent: String) throws {
        directory = parent + "/gnupg"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        var environment = ProcessInfo.processInfo.environment
        environment["GNUPGHOME"] = directory
        self.environment = environment
        let made = try ShellProcess.run("gpg", ["--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key",
                                                "kcf test <\(Self.recipient)>", "future-default", "default", "never"], environment: environment)
        guard made.status == 0 else { throw Failure(what: "gpg --quick-gen-key", stderr: made.stderr) }
    }

    deinit {
        _ = try? ShellProcess.run("gpgconf", ["--kill", "gpg-agent"], environment: environment)
    }

    /// Encrypts `plaintext` to the key into the file at `path`, as `pass insert` writes an entry.
    func encrypt(_ plaintext: [UInt8], to path: String) throws {
        let plain = path + ".plain"
        try Data(plaintext).write(to: URL(fileURLWithPath: plain))
        defer { try? FileManager.default.removeItem(atPath: plain) }
        let result = try ShellProcess.run("gpg", ["--batch", "--yes", "--trust-model", "always", "-r", Self.recipient, "-o", path, "-e", plain],
                                          environment: environment)
        guard result.status == 0 else { throw Failure(what: "gpg -e", stderr: result.stderr) }
    }

    struct Failure: Error, CustomStringConvertible {
        let what: String
        let stderr: String
        var description: String { "\(what) failed: \(stderr)" }
    }
}
