import KeychainCrypto

/// How strongly a new password slot is protected.
///
/// For example:
/// ```swift
/// let options = Keychain.CreationOptions(passwordIterations: .standard)        // 600,000 rounds
/// let fixture = Keychain.CreationOptions(passwordIterations: .insecureForTesting(1_000))
/// ```
public struct PasswordIterations: Sendable, Hashable {
    /// The PBKDF2-HMAC-SHA256 iteration count.
    public let count: UInt32

    /// 600,000 rounds, OWASP's 2023 advice for PBKDF2-HMAC-SHA256.
    public static let standard = PasswordIterations(count: 600_000)

    /// A custom count of at least 210,000 rounds.
    ///
    /// - Throws: `KeychainError.invalidParameter` below 210,000 or above 10,000,000.
    public static func custom(_ count: UInt32) throws(KeychainError) -> PasswordIterations {
        guard count >= 210_000, count <= Format.maximumIterations else {
            throw .invalidParameter("PBKDF2 iterations must be between 210,000 and 10,000,000, got \(count)")
        }
        return PasswordIterations(count: count)
    }

    /// Any count from 1 up, for tests and fixtures only: a low count makes the password cheap to guess.
    public static func insecureForTesting(_ count: UInt32) -> PasswordIterations {
        PasswordIterations(count: min(max(count, Format.minimumIterations), Format.maximumIterations))
    }

    /// The count an existing slot has, kept as it is when the slot is written again in another form (a version 1
    /// slot made a committed one): the user chose it, or a test did.
    static func kept(_ count: UInt32) -> PasswordIterations {
        PasswordIterations(count: min(max(count, Format.minimumIterations), Format.maximumIterations))
    }

    private init(count: UInt32) { self.count = count }
}
