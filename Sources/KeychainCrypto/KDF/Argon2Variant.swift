/// The three Argon2 variants, with their type numbers `y` of RFC 9106 §3.1 (hashed into H0 and into the
/// address blocks, so the variants give unrelated outputs).
@usableFromInline
enum Argon2Variant: UInt32, Sendable {
    /// Data-dependent addressing throughout: fastest, but memory accesses depend on the password.
    case argon2d = 0
    /// Data-independent addressing throughout.
    case argon2i = 1
    /// Data-independent addressing for the first two slices of the first pass, data-dependent after.
    case argon2id = 2

    /// Whether the reference blocks of the segment at (`pass`, `slice`) are chosen from address blocks
    /// (public values only) rather than from the previous block (RFC 9106 §3.4.1).
    func usesDataIndependentAddressing(pass: Int, slice: Int) -> Bool {
        switch self {
        case .argon2d: return false
        case .argon2i: return true
        case .argon2id: return pass == 0 && slice < 2
        }
    }
}
