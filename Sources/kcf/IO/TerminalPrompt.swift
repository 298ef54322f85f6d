#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Asks for a secret on the controlling terminal (/dev/tty) with echo turned off.
///
/// The prompt goes to stderr; the answer is read from /dev/tty, so it works when stdin and stdout are
/// redirected. The terminal's settings are restored on every way out: a normal return, an error, end of
/// input (Ctrl-D), and SIGINT, SIGTERM, SIGHUP or SIGQUIT, which restore the terminal and exit with
/// 128 + the signal number (130 for Ctrl-C).
enum TerminalPrompt {
    /// Whether a controlling terminal can be opened.
    static var isAvailable: Bool {
        let descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }

    /// Prints `prompt` and reads one line from the terminal without echo.
    ///
    /// - Returns: The line's bytes, without the newline.
    /// - Throws: `CommandError` when there is no terminal, its settings cannot be changed, or input ends
    ///   before a line (Ctrl-D).
    static func readSecret(prompt: String) throws(CommandError) -> [UInt8] {
        let descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .failed("no terminal to ask on (\(prompt.trimmingTrailingColon)); give the secret on stdin or see `kcf help`")
        }
        defer { close(descriptor) }
        var original = termios()
        guard tcgetattr(descriptor, &original) == 0 else {
            throw .failed("cannot read the terminal's settings: \(SystemError.describe(errno))")
        }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        TerminalRestore.arm(descriptor: descriptor, settings: original)
        defer { TerminalRestore.disarm() }
        guard tcsetattr(descriptor, TCSAFLUSH, &silent) == 0 else {
            throw .failed("cannot turn off the terminal's echo: \(SystemError.describe(errno))")
        }
        Output.prompt(prompt)
        defer { Output.prompt("\n") }
        return try readLine(from: descriptor)
    }

    /// Prints `prompt` and reads one line from the terminal with echo (a yes/no question).
    ///
    /// - Throws: `CommandError` when there is no terminal or input ends.
    static func ask(_ prompt: String) throws(CommandError) -> String {
        let descriptor = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw .failed("no terminal to ask on") }
        defer { close(descriptor) }
        Output.prompt(prompt)
        return String(decoding: try readLine(from: descriptor), as: UTF8.self)
    }

    /// Asks twice and checks both answers are the same.
    ///
    /// - Throws: `CommandError` (status 1) when they differ, or what ``readSecret(prompt:)`` throws.
    static func readNewSecret(prompt: String, confirmation: String) throws(CommandError) -> [UInt8] {
        var first = try readSecret(prompt: prompt)
        var second = try readSecret(prompt: confirmation)
        defer {
            wipe(&first)
            wipe(&second)
        }
        guard first == second else { throw .failed("the two entries differ; nothing was changed") }
        return first
    }

    private static func readLine(from descriptor: Int32) throws(CommandError) -> [UInt8] {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(descriptor, &byte, 1)
            if count == 1 {
                if byte == 0x0A { return line }
                line.append(byte)
            } else if count == 0 {
                guard !line.isEmpty else { throw .failed("cancelled: input ended at the prompt") }
                return line
            } else if errno != EINTR {
                throw .failure("cannot read the terminal: \(SystemError.describe(errno))", .io)
            }
        }
    }
}

extension String {
    /// The text without a trailing ": " or ":" (a prompt used in a message).
    fileprivate var trimmingTrailingColon: String {
        var text = self
        while text.hasSuffix(" ") || text.hasSuffix(":") { text.removeLast() }
        return text
    }
}
