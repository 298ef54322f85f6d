#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where passwords and item secrets come from. Never from argv for the keychain password.
///
/// - The keychain password: `$KCF_PASSWORD` when set and not empty; else the next line of stdin when
///   `--password-stdin` is given or stdin is not a terminal; else a prompt on the terminal without echo.
/// - An item secret (`-w`): the next line of stdin when `-w -` or `--secret-stdin` is given or stdin is
///   not a terminal; else a prompt on the terminal, asked twice for a new secret.
///
/// When both come from stdin, the keychain password is the first line and the item secret the second
/// (for `change-password`: the old password, then the new one).
final class SecretInput {
    /// The environment variable that may hold the keychain password.
    static let passwordVariable = "KCF_PASSWORD"

    private let environment: [String: String]
    private let passwordFromStdin: Bool
    private let stdin = LineReader(descriptor: 0)
    private let stdinIsTerminal = isatty(0) == 1

    /// - Parameters:
    ///   - environment: The process environment.
    ///   - passwordFromStdin: Whether `--password-stdin` was given.
    init(environment: [String: String], passwordFromStdin: Bool) {
        self.environment = environment
        self.passwordFromStdin = passwordFromStdin
    }

    /// Whether secrets are read from stdin rather than the terminal.
    private var readsStdin: Bool { passwordFromStdin || !stdinIsTerminal }

    /// The password of the existing keychain at `path`.
    func keychainPassword(for path: String) throws(CommandError) -> String {
        if let password = environment[Self.passwordVariable], !password.isEmpty { return password }
        return try text(try readLine(prompt: "password to unlock \(path): ", confirm: nil), what: "password")
    }

    /// A new password for a keychain: `$KCF_PASSWORD` when `useEnvironment` and set, a line of stdin, or
    /// asked twice on the terminal.
    func newKeychainPassword(prompt: String, useEnvironment: Bool) throws(CommandError) -> String {
        if useEnvironment, let password = environment[Self.passwordVariable], !password.isEmpty { return password }
        return try text(try readLine(prompt: prompt, confirm: "retype \(prompt)"), what: "password")
    }

    /// A new item's secret: a line of stdin, or asked twice on the terminal.
    ///
    /// - Parameter fromStdin: Read stdin even when it is a terminal (`-w -`, `--secret-stdin`).
    func itemSecret(fromStdin: Bool) throws(CommandError) -> [UInt8] {
        if fromStdin {
            guard let line = try stdin.nextLine() else { throw .failed("no secret on stdin (expected one more line)") }
            return line
        }
        return try readLine(prompt: "password data for new item: ", confirm: "retype password for new item: ")
    }

    private func readLine(prompt: String, confirm: String?) throws(CommandError) -> [UInt8] {
        if readsStdin {
            guard let line = try stdin.nextLine() else {
                throw .failed("no password on stdin (\(prompt.trimmingCharacters(in: ": ")))")
            }
            return line
        }
        if let confirm { return try TerminalPrompt.readNewSecret(prompt: prompt, confirmation: confirm) }
        return try TerminalPrompt.readSecret(prompt: prompt)
    }

    private func text(_ bytes: [UInt8], what: String) throws(CommandError) -> String {
        var bytes = bytes
        defer { wipe(&bytes) }
        guard !bytes.isEmpty else { throw .failure("the \(what) is empty", .invalidParameter) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .failure("the \(what) is not valid UTF-8", .invalidParameter)
        }
        return text
    }
}

extension String {
    /// The text without leading and trailing characters from `set`.
    fileprivate func trimmingCharacters(in set: String) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return String(text)
    }
}
