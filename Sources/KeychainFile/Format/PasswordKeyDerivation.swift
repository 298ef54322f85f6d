import KeychainCrypto

/// How the key of a new password slot is derived from the password: PBKDF2-HMAC-SHA256 or Argon2id, with
/// their costs (SPEC.md §21.1–§21.2).
///
/// ``standard`` is Argon2id at 64 MiB, 3 passes and 4 lanes (RFC 9106 §4's second recommended option) in a
/// file of format version 2, and PBKDF2 at 600,000 rounds in a file kept at version 1, which holds only PBKDF2
/// slots. Only new password slots use it: a slot a rewrite keeps, or remakes for the credential that opened
/// it, keeps its own KDF and parameters; raw-key slots use HKDF whatever is chosen.
///
/// For example:
/// ```swift
/// let keychain = try Keychain.create(at: path, credential: .password("correct horse"))       // .standard
/// try keychain.changePassword(from: "correct horse", to: "battery staple",
///                             keyDerivation: try .argon2id(memoryKiB: 262_144, passes: 3, lanes: 4))
/// try keychain.addCredential(.password("backup"), keyDerivation: .pbkdf2(.standard))
/// ```
public struct PasswordKeyDerivation: Sendable, Hashable, CustomStringConvertible {
    /// The choice, before the file's format version says what ``standard`` is.
    enum Choice: Sendable, Hashable {
        case standard
        case pbkdf2(iterations: UInt32)
        case argon2id(memoryKiB: UInt32, passes: UInt32, lanes: UInt8)
    }

    let choice: Choice

    /// The library's default: Argon2id (64 MiB, 3 passes, 4 lanes) in a version 2 file, PBKDF2 at 600,000
    /// rounds in a file kept at version 1.
    public static let standard = PasswordKeyDerivation(choice: .standard)

    /// Argon2id at RFC 9106 §4's second recommended option: 64 MiB, 3 passes, 4 lanes — ``standard`` in a
    /// version 2 file.
    public static let recommendedArgon2id = PasswordKeyDerivation(
        choice: .argon2id(memoryKiB: 65_536, passes: 3, lanes: 4))

    /// The least memory ``argon2id(memoryKiB:passes:lanes:)`` takes: 19 MiB, OWASP's smallest Argon2id memory.
    public static let minimumArgon2idMemoryKiB: UInt32 = 19_456
    /// The least passes ``argon2id(memoryKiB:passes:lanes:)`` takes: 2, OWASP's at 19 MiB.
    public static let minimumArgon2idPasses: UInt32 = 2
    /// The most memory a writer gives one Argon2id slot: 1 GiB, what a reader allows by default
    /// (``Keychain/OpenOptions/keyDerivationMemoryLimit``), so that no file it writes is refused by a default open.
    public static let maximumArgon2idMemoryKiB = UInt32(KeyDerivationBudget.standardMemoryLimitKiB)

    /// PBKDF2-HMAC-SHA256 at `iterations` rounds.
    ///
    /// - Parameter iterations: The rounds, ``PasswordIterations/standard`` or another.
    public static func pbkdf2(_ iterations: PasswordIterations) -> PasswordKeyDerivation {
        PasswordKeyDerivation(choice: .pbkdf2(iterations: iterations.count))
    }

    /// Argon2id (RFC 9106) with the given cost.
    ///
    /// For example, `try .argon2id(memoryKiB: 262_144, passes: 3, lanes: 4)` asks for 256 MiB.
    ///
    /// - Parameters:
    ///   - memoryKiB: Memory in KiB: 19,456 (19 MiB) … 1,048,576 (1 GiB), and at least 8 × `lanes`.
    ///   - passes: Passes over the memory: 2 … 2²⁰, with `memoryKiB × passes` ≤ 2²⁶ (SPEC.md §21.1).
    ///   - lanes: Lanes (parallelism): 1 … 16.
    /// - Throws: `KeychainError.invalidParameter` naming the value out of its range; memory above 1 GiB is
    ///   refused because a default open refuses it (``Keychain/OpenOptions/keyDerivationMemoryLimit``).
    public static func argon2id(
        memoryKiB: UInt32, passes: UInt32, lanes: UInt8
    ) throws(KeychainError) -> PasswordKeyDerivation {
        try checkFormatRanges(memoryKiB: memoryKiB, passes: passes, lanes: lanes)
        guard memoryKiB >= minimumArgon2idMemoryKiB else {
            throw .invalidParameter("Argon2id memory must be at least \(minimumArgon2idMemoryKiB) KiB (19 MiB), got \(memoryKiB) KiB")
        }
        guard passes >= minimumArgon2idPasses else {
            throw .invalidParameter("Argon2id passes must be at least \(minimumArgon2idPasses), got \(passes)")
        }
        return PasswordKeyDerivation(choice: .argon2id(memoryKiB: memoryKiB, passes: passes, lanes: lanes))
    }

    /// Argon2id at any cost the format and a default open allow, below the minimum of
    /// ``argon2id(memoryKiB:passes:lanes:)`` too: for tests and fixtures only, as a low cost makes the password
    /// cheap to guess.
    ///
    /// - Throws: `KeychainError.invalidParameter` outside SPEC.md §21.1's ranges (lanes 1 … 16, passes ≥ 1,
    ///   memory ≥ 8 × lanes, memory × passes ≤ 2²⁶ KiB) or above 1 GiB of memory.
    public static func insecureForTesting(
        argon2idMemoryKiB memoryKiB: UInt32, passes: UInt32, lanes: UInt8
    ) throws(KeychainError) -> PasswordKeyDerivation {
        try checkFormatRanges(memoryKiB: memoryKiB, passes: passes, lanes: lanes)
        return PasswordKeyDerivation(choice: .argon2id(memoryKiB: memoryKiB, passes: passes, lanes: lanes))
    }

    /// The ranges a slot must keep to be read (SPEC.md §21.1), and the memory a default open allows.
    private static func checkFormatRanges(memoryKiB: UInt32, passes: UInt32, lanes: UInt8) throws(KeychainError) {
        guard lanes >= 1, Int(lanes) <= KDF.Argon2.maximumParallelism else {
            throw .invalidParameter("Argon2id lanes must be between 1 and \(KDF.Argon2.maximumParallelism), got \(lanes)")
        }
        guard passes >= 1, Int(passes) <= KDF.Argon2.maximumIterations else {
            throw .invalidParameter("Argon2id passes must be between 1 and \(KDF.Argon2.maximumIterations), got \(passes)")
        }
        guard UInt64(memoryKiB) >= 8 * UInt64(lanes) else {
            throw .invalidParameter("Argon2id memory must be at least 8 KiB for each lane (\(8 * Int(lanes)) KiB for \(lanes)), got \(memoryKiB) KiB")
        }
        guard memoryKiB <= maximumArgon2idMemoryKiB else {
            throw .invalidParameter(
                "Argon2id memory must be at most \(maximumArgon2idMemoryKiB) KiB (1 GiB), what an open allows by default, got \(memoryKiB) KiB")
        }
        guard UInt64(memoryKiB) * UInt64(passes) <= UInt64(KDF.Argon2.maximumWorkKiB) else {
            throw .invalidParameter(
                "Argon2id memory × passes must be at most \(KDF.Argon2.maximumWorkKiB) KiB, got \(memoryKiB) KiB × \(passes)")
        }
    }

    /// The KDF of a new committed password slot of a version 2 file.
    var slotKDF: SlotKDF {
        switch choice {
        case .standard: return Self.recommendedArgon2id.slotKDF
        case .pbkdf2(let iterations): return .pbkdf2(iterations: iterations)
        case .argon2id(let memoryKiB, let passes, let lanes): return .argon2id(memoryKiB: memoryKiB, passes: passes, lanes: lanes)
        }
    }

    /// The PBKDF2 rounds of a new password slot of a format version 1 file: ``standard`` is 600,000 there.
    ///
    /// - Parameter reason: Why the file is of version 1, for the error's words.
    /// - Throws: `KeychainError.invalidParameter` for Argon2id, which version 1 cannot hold.
    func version1Iterations(because reason: String) throws(KeychainError) -> PasswordIterations {
        switch choice {
        case .standard: return .standard
        case .pbkdf2(let iterations): return .kept(iterations)
        case .argon2id:
            throw .invalidParameter(
                "Argon2id password slots need format version 2, and \(reason): a version 1 file holds only PBKDF2 password slots (choose PBKDF2, or let the file become version 2)")
        }
    }

    public var description: String {
        switch choice {
        case .standard: return "standard"
        case .pbkdf2(let iterations): return "PBKDF2-HMAC-SHA256, \(iterations) iterations"
        case .argon2id(let memoryKiB, let passes, let lanes): return "Argon2id, \(memoryKiB) KiB, \(passes) passes, \(lanes) lanes"
        }
    }

    private init(choice: Choice) { self.choice = choice }
}
