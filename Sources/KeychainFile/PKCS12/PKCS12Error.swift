/// Why a PKCS #12 file could not be read or written.
public enum PKCS12Error: Error, Hashable, Sendable, CustomStringConvertible {
    /// The bytes are not a PKCS #12 file as DER: what is wrong, and the byte offset where (in the file, or in
    /// the decrypted contents named in `reason`).
    case malformed(offset: Int, reason: String)
    /// The file's MAC does not verify: the password is wrong, or the file was altered.
    case wrongPassword
    /// The file uses an algorithm this reader does not implement, named with its object identifier; for
    /// example `pbeWithSHAAnd128BitRC4` or PBKDF2 with HMAC-SHA1.
    case unsupportedAlgorithm(String)
    /// The file holds something this reader does not take, such as public-key integrity or encryption, or
    /// a CRL bag; nothing is returned rather than part of the file.
    case unsupportedContent(String)
    /// An iteration count in the file is 0 or above ``PKCS12Archive/maximumIterationCount``.
    case iterationCountOutOfRange(Int)
    /// The file's key derivations together ask for more rounds than a reader spends on one file
    /// (``PKCS12Archive/maximumIterationCount`` each, five times that in all): the rounds with the next one.
    case tooMuchKeyDerivation(rounds: Int)
    /// Encrypted contents do not decrypt with the password although the MAC verified (or the file has no MAC):
    /// what did not decrypt.
    case decryptionFailed(String)
    /// A parameter given to the writer cannot be used: which, and why.
    case invalidParameter(String)

    public var description: String {
        switch self {
        case .malformed(let offset, let reason): return "not a PKCS #12 file: \(reason) (at byte \(offset))"
        case .wrongPassword: return "the MAC does not verify: wrong password, or the file was altered"
        case .unsupportedAlgorithm(let name): return "unsupported algorithm \(name)"
        case .unsupportedContent(let what): return "unsupported content: \(what)"
        case .iterationCountOutOfRange(let count):
            return "iteration count \(count) is out of range (1 to \(PKCS12Archive.maximumIterationCount))"
        case .tooMuchKeyDerivation(let rounds):
            return "the file's key derivations ask for \(rounds) rounds in all, more than the \(PKCS12WorkBudget.maximumTotalRounds) "
                + "one file may (each is at most \(PKCS12Archive.maximumIterationCount)): reading it would take minutes or hours"
        case .decryptionFailed(let what): return "\(what) does not decrypt: wrong password, or the file was altered"
        case .invalidParameter(let reason): return "invalid parameter: \(reason)"
        }
    }
}

extension PKCS12Error {
    /// Runs `body`, which reads DER, turning its `DERError` into ``malformed(offset:reason:)`` with `context` (where
    /// the offsets count from, when not the file) added to the reason.
    static func readingDER<T>(_ context: String? = nil, _ body: () throws(DERError) -> T) throws(PKCS12Error) -> T {
        do throws(DERError) {
            return try body()
        } catch {
            throw .malformed(offset: error.offset, reason: context.map { "\(error.reason), \($0)" } ?? error.reason)
        }
    }
}
