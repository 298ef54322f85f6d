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
/// - A new keychain password (`change-password`): the next line of stdin, or asked twice on the terminal.
/// - A PKCS #12 passphrase (`export -f pkcs12`, `import FILE.p12`): the next line of stdin, or asked on the
///   terminal (twice for export).
/// - An item secret (`-w`): when `-w -` or `--secret-stdin` is given or stdin is not a terminal, every byte
///   left on stdin up to the end of input, less one final `\n` or `\r\n` (kept with `--keep-newline`);
///   else asked twice on the terminal.
///
/// A line ends at `\n`; a `\r` before it is dropped. So when the keychain password comes from stdin it is
/// the first line, and an item's secret is everything after it (for `change-password`: the old password's
/// line, then the new one's).
final class SecretInput {
    /// The environment variable that may hold the keychain password.
    static let passwordVariable = "KCF_PASSWORD"

    /// The largest secret an item holds (SPEC.md §11), so the most read from stdin for one.
    static let maximumSecretSize = 1_048_576

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

    /// The passphrase of a PKCS #12 file: the next line of stdin (after the keychain password's line, when that
    /// was read from stdin), or asked on the terminal — twice when `confirm`, for a file being written.
    ///
    /// - Parameters:
    ///   - prompt: What the terminal prompt says.
    ///   - confirm: Ask twice on the terminal (exporting).
    ///   - allowEmpty: Accept the empty passphrase (importing a file written without one).
    /// - Throws: `CommandError` when stdin has no line left, or the passphrase is empty (unless allowed) or not
    ///   UTF-8; what the terminal prompt throws.
    func passphrase(prompt: String, confirm: Bool, allowEmpty: Bool) throws(CommandError) -> String {
        var bytes = try readLine(prompt: prompt, confirm: confirm ? "retype \(prompt)" : nil)
        defer { wipe(&bytes) }
        if bytes.isEmpty && allowEmpty { return "" }
        return try text(bytes, what: "passphrase")
    }

    /// A new item's secret: the rest of stdin, or asked twice on the terminal.
    ///
    /// From stdin, the secret is every byte up to the end of input (after the keychain password's line, when
    /// that was read from stdin first): several lines, NUL bytes and bytes that are not UTF-8 included. One
    /// final `\n` or `\r\n` is removed, so that `echo pw | kcf …` stores `pw`, unless `keepNewline`.
    ///
    /// - Parameters:
    ///   - fromStdin: Read stdin even when it is a terminal (`-w -`, `--secret-stdin`).
    ///   - keepNewline: Keep a final newline (`--keep-newline`).
    /// - Throws: `CommandError` when stdin holds no byte at all, or more than ``maximumSecretSize`` bytes (plus a
    ///   final newline); what the terminal prompt throws.
    func itemSecret(fromStdin: Bool, keepNewline: Bool) throws(CommandError) -> [UInt8] {
        guard fromStdin || !stdinIsTerminal else {
            return try TerminalPrompt.readNewSecret(prompt: "password data for new item: ",
                                                    confirmation: "retype password for new item: ")
        }
        guard var secret = try stdin.readToEnd(limit: Self.maximumSecretSize + 2) else {
            throw .failure("the secret on stdin is longer than 1,048,576 bytes, the most an item holds", .invalidParameter)
        }
        guard !secret.isEmpty else { throw .failed("no secret on stdin (it ended before any byte of the secret)") }
        if !keepNewline && secret.last == 0x0A {
            secret.removeLast()
            if secret.last == 0x0D { secret.removeLast() }
        }
        return secret
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
