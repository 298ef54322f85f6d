import KeychainFile

/// The exit statuses of `kcf`.
///
/// Keychain errors exit with the low byte of their OSStatus code, as macOS `security(1)` does — so "item not
/// found" (errSecItemNotFound, −25300) is 44 in both tools. The few statuses that are not keychain errors
/// (usage, interruption, a torn tail found by `verify`, output that could not be written, anything else) use
/// small numbers no OSStatus low byte of this library takes.
enum ExitStatus: Int32, CaseIterable {
    /// The command did what it was asked.
    case success = 0
    /// Anything else: unreadable input file, mismatched password confirmation, no terminal to prompt on.
    case failure = 1
    /// The command line is wrong: unknown command or option, missing or malformed value.
    case usage = 2
    /// `verify` only: the records verified, but the file ends in a torn tail — an incomplete or unverifiable
    /// last record, left by an interrupted write or by damage to that record (SPEC.md §9.2).
    case tornTail = 3
    /// What the command printed could not all be written: stdout or stderr is a full disk, a closed pipe, or
    /// was closed. Replaces 0 only: a command that failed keeps its own status.
    case outputFailed = 4
    case recoveredDamage = 5
    case notConfirmedDurable = 6
    /// `conflicts` only: the keychain holds conflict copies that merges kept (SPEC.md §43.4).
    case conflictsFound = 7
    /// The credential reaches only some access groups, and the command asked for another, or for the whole
    /// keychain (errSecMissingEntitlement, −34018).
    case missingEntitlement = 30
    /// The file is older than what this keychain already saw (errSecVerifyFailed, −67808).
    case rolledBack = 32
    /// No item matched (errSecItemNotFound, −25300).
    case itemNotFound = 44
    /// An item with the same primary key exists (errSecDuplicateItem, −25299).
    case duplicateItem = 45
    /// The password does not open the keychain (errSecAuthFailed, −25293).
    case wrongPassword = 51
    /// The file is damaged, tampered with or not a keychain (errSecDecode, −26275).
    case corrupted = 93
    /// `run`: the command could not be run (as shells exit).
    case cannotRun = 126
    /// `run`: the command was not found (as shells exit).
    case commandNotFound = 127
    /// Interrupted by SIGINT while prompting (128 + 2).
    case interrupted = 130
    /// A limit of the format was reached (errSecAllocate, −108).
    case limitReached = 148
    /// The keychain can only be read and a write was asked: a read-only mount, file or directory, or a file
    /// with hard links (errSecWrPerm, −61).
    case readOnly = 195
    /// A value the library refused: an empty password, a malformed certificate (errSecParam, −50).
    case invalidParameter = 206
    /// A system call failed: missing file, permissions, full disk (errSecIO, −36).
    case io = 220
    /// The file is in a format version this build does not read, or uses something of it that this build does
    /// not know (errSecUnimplemented, −4).
    case unsupportedVersion = 252

    /// The status for a keychain error: the low byte of its OSStatus code.
    init(_ error: KeychainError) {
        switch error {
        case .duplicateItem: self = .duplicateItem
        case .itemNotFound: self = .itemNotFound
        case .invalidParameter: self = .invalidParameter
        case .wrongCredentials: self = .wrongPassword
        case .corrupted, .notAKeychain: self = .corrupted
        case .unsupportedVersion, .unsupportedFeature: self = .unsupportedVersion
        case .io, .lockFileRefused: self = .io
        case .readOnly: self = .readOnly
        case .notConfirmedDurable: self = .notConfirmedDurable
        case .limitReached: self = .limitReached
        case .rolledBack: self = .rolledBack
        case .missingEntitlement: self = .missingEntitlement
        }
    }

    /// One line for `kcf help`.
    var summary: String {
        switch self {
        case .success: return "success"
        case .failure: return "other error (unreadable input, confirmation mismatch, no terminal, …)"
        case .usage: return "usage error: unknown command or option, missing or bad value"
        case .tornTail: return "verify: the records verify, but the last one is torn (interrupted write or damage)"
        case .outputFailed: return "output could not be written (full disk, closed pipe, closed stdout or stderr)"
        case .notConfirmedDurable: return "the change took effect, but the disk did not confirm it durable (a failed fsync)"
        case .conflictsFound: return "conflicts: the keychain holds conflict copies that merges kept (resolve them with kcf resolve)"
        case .recoveredDamage: return "--recover: the command ran on what still authenticates; damage was found and listed on stderr"
        case .missingEntitlement: return "the credential does not reach that access group, or the whole keychain (errSecMissingEntitlement)"
        case .rolledBack: return "the file was rolled back to an older copy (errSecVerifyFailed)"
        case .itemNotFound: return "item not found (errSecItemNotFound, as security)"
        case .duplicateItem: return "duplicate item (errSecDuplicateItem)"
        case .wrongPassword: return "wrong password (errSecAuthFailed)"
        case .corrupted: return "corrupted, tampered with, or not a keychain file (errSecDecode)"
        case .cannotRun: return "run: the command could not be run (permissions, not executable)"
        case .commandNotFound: return "run: the command was not found; otherwise run exits with its command's status, 128 + a signal"
        case .interrupted: return "interrupted (SIGINT) at a prompt"
        case .limitReached: return "a limit of the format was reached (errSecAllocate)"
        case .readOnly: return "the keychain is read-only: its mount, file or directory, or it has hard links (errSecWrPerm)"
        case .invalidParameter: return "invalid value, e.g. an empty password or a malformed certificate (errSecParam)"
        case .io: return "I/O error: missing file, permissions, disk (errSecIO)"
        case .unsupportedVersion: return "unsupported file format version (errSecUnimplemented)"
        }
    }
}
