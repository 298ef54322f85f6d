/// Why a KeePass database cannot be imported: nothing of it is.
enum KDBXError: Error, CustomStringConvertible, Equatable {
    /// Not a KeePass file at all.
    case notKeePass
    /// A KeePass format kcf does not read, named (KDBX 3.1, KeePass 1.x's KDB, a newer KDBX).
    case unsupportedVersion(String)
    /// A cipher, KDF, compression or inner stream kcf does not read, named.
    case unsupportedAlgorithm(String)
    /// A parameter of the file over kcf's bound (memory, iterations, rounds, sizes): reading would cost too much.
    case limitExceeded(String)
    /// The password (or key file) does not open the file: the header's HMAC does not verify.
    case wrongPassword
    /// The file is damaged or altered where it can be told: a checksum or a MAC does not match, or a structure
    /// is cut short or malformed.
    case damaged(String)

    var description: String {
        switch self {
        case .notKeePass: return "not a KeePass database (it does not start with KeePass's signature)"
        case .unsupportedVersion(let what): return what
        case .unsupportedAlgorithm(let what): return "\(what) is not supported"
        case .limitExceeded(let what): return "\(what): refused, to bound the memory and time a file can make kcf spend"
        case .wrongPassword: return "wrong password (the header's HMAC does not verify; or the header was altered)"
        case .damaged(let what): return "damaged: \(what)"
        }
    }
}
