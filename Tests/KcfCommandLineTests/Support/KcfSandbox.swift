import Foundation
import Testing

/// A temporary directory with a keychain path in it, and `kcf` runs against that keychain.
///
/// `KCF_KEYCHAIN` points at `keychain`; HOME and XDG_DATA_HOME point inside the directory, so that nothing
/// touches the real per-user keychain. Passwords go through stdin or `KCF_PASSWORD`, never arguments.
final class KcfSandbox {
    /// The password of the keychains the tests create.
    static let password = "correct horse battery staple"

    let directory: String
    let keychain: String
    var environment: [String: String]

    init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("kcf-cli-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        directory = base.path
        keychain = directory + "/test.kcf"
        environment = KcfProcess.baseEnvironment(home: directory)
        environment["KCF_KEYCHAIN"] = keychain
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// A path inside the directory.
    func file(_ name: String) -> String { directory + "/" + name }

    /// Runs `kcf ARGUMENTS` with `stdin`, in the sandbox's directory and environment (plus `extra`).
    @discardableResult
    func run(_ arguments: [String], stdin: String = "", extra: [String: String] = [:],
             sourceLocation: SourceLocation = #_sourceLocation) throws -> KcfProcess.Result {
        try KcfProcess.run(arguments, stdin: stdin, environment: environment.merging(extra) { $1 },
                           directory: directory, sourceLocation: sourceLocation)
    }

    /// Runs `kcf ARGUMENTS` with `stdin` as bytes and stdout and stderr where ``KcfProcess/Stream`` says, in the
    /// sandbox's environment (plus `extra`).
    @discardableResult
    func run(_ arguments: [String], stdinBytes: [UInt8], extra: [String: String] = [:],
             stdout: KcfProcess.Stream = .captured, stderr: KcfProcess.Stream = .captured,
             sourceLocation: SourceLocation = #_sourceLocation) throws -> KcfProcess.Result {
        try KcfProcess.run(arguments, stdin: stdinBytes, environment: environment.merging(extra) { $1 },
                           stdout: stdout, stderr: stderr, sourceLocation: sourceLocation)
    }

    /// Runs a command that needs the keychain password, giving it as stdin's first line, then `more`.
    @discardableResult
    func unlocked(_ arguments: [String], then more: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws -> KcfProcess.Result {
        try run(arguments, stdin: ([Self.password] + more).map { $0 + "\n" }.joined(), sourceLocation: sourceLocation)
    }

    /// Creates the sandbox keychain (1,000 PBKDF2 rounds, so that the tests are fast) and checks it worked; in
    /// `formatVersion` when given, for tests of one version's layout, else in the default version.
    func createKeychain(at path: String? = nil, formatVersion: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var arguments = ["create-keychain", "--insecure-iterations", "1000"]
        if let formatVersion { arguments += ["--format-version", String(formatVersion)] }
        if let path { arguments.append(path) }
        let result = try run(arguments, stdin: Self.password + "\n", sourceLocation: sourceLocation)
        #expect(result.status == 0, "create-keychain: \(result.stderr)", sourceLocation: sourceLocation)
    }

    /// Adds a generic password with the secret on stdin and checks it worked.
    func addGeneric(account: String, service: String, secret: String, extra: [String] = [],
                    sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try unlocked(["add-generic-password", "-a", account, "-s", service] + extra + ["-w"], then: [secret],
                                  sourceLocation: sourceLocation)
        #expect(result.status == 0, "add-generic-password: \(result.stderr)", sourceLocation: sourceLocation)
    }

    /// The bytes of the sandbox keychain file.
    func keychainBytes(_ path: String? = nil) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path ?? keychain)))
    }

    /// A file of the repository's Fixtures directory, located from this source file.
    static func fixture(_ relativePath: String) -> String {
        RepositoryFiles.url("Fixtures/" + relativePath).path
    }
}
