#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The errors of KeychainFile, each with an OSStatus-compatible code.
///
/// Item-level errors use the codes Apple's Security framework returns for the same situation, so code
/// ported from `SecItem…` calls can keep comparing against them; file-level errors carry what went wrong and
/// where. Errors compare equal by ``code`` and case, not by their descriptive text.
///
/// For example:
/// ```swift
/// do {
///     try keychain.add(GenericPassword(service: "mail", account: "ann", value: secret))
/// } catch KeychainError.duplicateItem {
///     // the item already exists: update it instead
/// }
/// ```
public enum KeychainError: Error, Sendable, CustomStringConvertible {
    /// Thrown when an add, or an update, would give an item the same primary key as an existing item.
    /// (errSecDuplicateItem, −25299)
    case duplicateItem
    /// Thrown when a search, update or delete matches no item. (errSecItemNotFound, −25300)
    case itemNotFound
    /// Thrown when a parameter is invalid: an attribute of the wrong type or class, a value over a limit, an
    /// empty password. The text says which. (errSecParam, −50)
    case invalidParameter(String)
    /// Thrown when no key slot opens with the given password or key. (errSecAuthFailed, −25293)
    case wrongCredentials
    /// Thrown when the file is damaged or was tampered with: `offset` is the byte offset of the structure
    /// that failed and `reason` says how. (errSecDecode, −26275)
    case corrupted(offset: Int, reason: String)
    /// Thrown when the file is not a keychain file at all (wrong magic number). (errSecDecode, −26275)
    case notAKeychain
    /// Thrown when the file was written in a format version this library does not read.
    /// (errSecUnimplemented, −4)
    case unsupportedVersion(Int)
    /// Thrown when the file is in a format version this library reads but uses something of it this library
    /// does not know — a record kind, a key id, a box role or a page encoding that a newer writer added — and
    /// that is not damage (the bytes that say so passed their check or their authentication): `offset` is where,
    /// and `reason` says what. Nothing is repaired, set aside or dropped for it. (errSecUnimplemented, −4)
    case unsupportedFeature(offset: Int, reason: String)
    /// Thrown when a system call fails: `operation` names it and `path` the file. (errSecIO, −36)
    case io(operation: String, errno: Int32, path: String)
    /// Thrown when the keychain has reached a limit of the format or of this implementation, for example
    /// too many records sealed under one key; the text says which. (errSecAllocate, −108)
    case limitReached(String)
    /// Thrown when the file is older than a head the caller pinned (``Keychain/OpenOptions/expectedHead``) or
    /// than one this keychain object already saw: it was replaced by an older copy, cut short, or is not a
    /// continuation of that head. `expected` is the pinned head and `found` the file's. (errSecVerifyFailed,
    /// −67808)
    case rolledBack(expected: Head, found: Head)
    /// Thrown when a write (an add, update, delete, compaction or credential change) is asked of a keychain
    /// that can only be read: its file, its lock file or its directory cannot be written (a read-only mount, a
    /// file of mode 0400, a directory of mode 0500), or the file has more than one name (hard links, which
    /// writers cannot share safely). `path` is the path the keychain was opened with; `reason` says which and
    /// what to do. Nothing was written. (errSecWrPerm, −61)
    case readOnly(path: String, reason: String)
    /// Thrown when the lock file beside the keychain (`NAME.lock`) is a symbolic link or not a regular file (a
    /// directory, a FIFO): following or using it could make the keychain write another file, or block. Nothing
    /// was opened or written; `path` is the lock file's and `reason` says what is there. (errSecIO, −36)
    case lockFileRefused(path: String, reason: String)
    /// Thrown when a change **took effect** but could not be confirmed durable: its record is in the file, or its
    /// new file is in place, and the keychain (this object, and any process that opens the file) holds the
    /// change — but the `fsync` that would make it survive a power loss failed (the record's, the directory's
    /// after a rename or link). Not a failure to retry: the change is there. `operation` says what was done
    /// and `reason` what could not be confirmed. (errSecIO, −36)
    case notConfirmedDurable(operation: String, reason: String)
    /// Thrown when a keychain opened with a credential scoped to access groups (``CredentialScope``) is asked
    /// for something outside them: an item of another access group — adding, finding, updating, deleting or
    /// moving one — names `group`; a change that takes the whole keychain (a credential added or removed, the
    /// keys rotated) has `group` `nil`. `operation` says what was asked. Nothing was read or written, and nothing
    /// is said of the other groups' items. (errSecMissingEntitlement, −34018)
    case missingEntitlement(group: String?, operation: String)

    /// The OSStatus-compatible code of the error.
    public var code: Int32 {
        switch self {
        case .duplicateItem: return -25299
        case .itemNotFound: return -25300
        case .invalidParameter: return -50
        case .wrongCredentials: return -25293
        case .corrupted, .notAKeychain: return -26275
        case .unsupportedVersion, .unsupportedFeature: return -4
        case .io, .lockFileRefused, .notConfirmedDurable: return -36
        case .limitReached: return -108
        case .rolledBack: return -67808
        case .readOnly: return -61
        case .missingEntitlement: return -34018
        }
    }

    public var description: String {
        switch self {
        case .duplicateItem: return "duplicate item: an item with the same primary key already exists"
        case .itemNotFound: return "item not found"
        case .invalidParameter(let reason): return "invalid parameter: \(reason)"
        case .wrongCredentials: return "wrong password or key"
        case .corrupted(let offset, let reason): return "corrupted keychain file at byte \(offset): \(reason)"
        case .notAKeychain: return "not a keychain file"
        case .unsupportedVersion(let version): return "unsupported keychain format version \(version)"
        case .unsupportedFeature(let offset, let reason):
            return "the keychain file uses, at byte \(offset), something this version of KeychainFile does not read: \(reason); a newer version may"
        case .io(let operation, let errno, let path): return "\(operation) failed on \(path): \(Self.systemMessage(errno)) (errno \(errno))"
        case .limitReached(let what): return "limit reached: \(what)"
        case .rolledBack(let expected, let found):
            let group = found.rolledBackGroups(from: expected).map { "; \($0)" } ?? ""
            return "the keychain file was rolled back: it holds head \(found), which does not contain the expected head \(expected)\(group)"
        case .readOnly(let path, let reason): return "the keychain at \(path) is read-only: \(reason)"
        case .lockFileRefused(let path, let reason): return "refusing the lock file \(path): \(reason)"
        case .notConfirmedDurable(let operation, let reason):
            return "\(operation) took effect, but could not be confirmed durable: \(reason); it is in effect now, and may be lost "
                + "only if the system stops before the disk has it"
        case .missingEntitlement(let group?, let operation):
            return "missing entitlement: \(operation) needs access group \"\(group)\", which the credential this keychain was opened with does not reach"
        case .missingEntitlement(nil, let operation):
            return "missing entitlement: \(operation) needs a credential that reaches the whole keychain; this one reaches only some access groups"
        }
    }
}

extension KeychainError: Equatable {
    /// Errors are equal when they are the same case; associated texts and offsets are not compared, except
    /// the version of `unsupportedVersion`.
    public static func == (lhs: KeychainError, rhs: KeychainError) -> Bool {
        switch (lhs, rhs) {
        case (.duplicateItem, .duplicateItem), (.itemNotFound, .itemNotFound), (.invalidParameter, .invalidParameter),
             (.wrongCredentials, .wrongCredentials), (.corrupted, .corrupted), (.notAKeychain, .notAKeychain),
             (.io, .io), (.limitReached, .limitReached), (.rolledBack, .rolledBack), (.readOnly, .readOnly),
             (.lockFileRefused, .lockFileRefused), (.notConfirmedDurable, .notConfirmedDurable),
             (.unsupportedFeature, .unsupportedFeature), (.missingEntitlement, .missingEntitlement):
            return true
        case (.unsupportedVersion(let a), .unsupportedVersion(let b)):
            return a == b
        default:
            return false
        }
    }
}

extension KeychainError: LocalizedError {
    /// The same sentence as ``description``, so that `localizedDescription` (with Foundation) reads as a
    /// sentence rather than "The operation could not be completed".
    public var errorDescription: String? { description }
}

extension KeychainError {
    /// The system's text for `code`, such as "No such file or directory".
    static func systemMessage(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "unknown error" }
        return String(cString: text)
    }
}
