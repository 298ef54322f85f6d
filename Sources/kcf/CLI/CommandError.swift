import KeychainFile

/// Why a command failed: what `kcf` prints on stderr and the status it exits with.
enum CommandError: Error, CustomStringConvertible {
    /// The command line is wrong; the command's usage is printed after the message.
    case usage(String)
    /// The keychain library refused or failed.
    case keychain(KeychainError)
    /// Anything else, with its message and exit status.
    case failure(String, ExitStatus)
    /// The keychain library failed, and a line after the error says what to do next.
    case keychainWithHint(KeychainError, hint: String)

    /// A failure with the generic status 1.
    static func failed(_ message: String) -> CommandError { .failure(message, .failure) }

    /// The process exit status for this error.
    var status: ExitStatus {
        switch self {
        case .usage: return .usage
        case .keychain(let error), .keychainWithHint(let error, _): return ExitStatus(error)
        case .failure(_, let status): return status
        }
    }

    var description: String {
        switch self {
        case .usage(let message): return message
        case .keychain(let error), .keychainWithHint(let error, _): return Self.describe(error)
        case .failure(let message, _): return message
        }
    }

    /// The library's description, with the security-style wording for the common cases.
    private static func describe(_ error: KeychainError) -> String {
        switch error {
        case .itemNotFound: return "The specified item could not be found in the keychain."
        case .duplicateItem: return "The specified item already exists in the keychain (use -U to update it)."
        case .wrongCredentials: return "The password does not open the keychain."
        default: return error.description
        }
    }
}

/// Runs `body`, turning a keychain error into a ``CommandError``.
///
/// Written with typed throws on both sides so that callers can stay typed (see the note on the Swift 6.3.1
/// release-build crash with `catch .case` in untyped functions).
func keychainCall<Result>(_ body: () throws(KeychainError) -> Result) throws(CommandError) -> Result {
    do throws(KeychainError) {
        return try body()
    } catch {
        throw .keychain(error)
    }
}
