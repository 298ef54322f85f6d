import KeychainCrypto

/// What opens a keychain: a password, or a 32-byte key for servers that get theirs from a secret manager.
///
/// For example:
/// ```swift
/// let keychain = try Keychain.open(at: path, credential: .password("correct horse battery staple"))
/// let server = try Keychain.open(at: path, credential: .key(SymmetricKey(data: keyFromVault)))
/// ```
public enum Credential: Sendable {
    /// A password. It is normalised to Unicode NFC and encoded as UTF-8 before key derivation, so the same
    /// password typed with composed or decomposed accents opens the file.
    case password(String)
    /// A raw application key of exactly 32 bytes.
    case key(SymmetricKey)

    /// The slot type this credential opens.
    var slotType: KeySlot.SlotType {
        switch self {
        case .password: return .password
        case .key: return .rawKey
        }
    }

    /// The UTF-8 bytes of the NFC form of a password (SPEC.md §5: UTF-8(NFC(password))).
    ///
    /// `String._nfcCodeUnits` is the standard library's own NFC (public ABI, though underscored; the stdlib's
    /// string comparison and hashing normalise with the same code). It keeps Foundation's
    /// `precomposedStringWithCanonicalMapping`, and with it full Foundation and ICU, out of the library;
    /// NFCDifferentialTests checks that the two agree on every scalar and on mixed sequences.
    static func normalizedPasswordBytes(_ password: String) -> [UInt8] {
        password._nfcCodeUnits
    }

    /// Whether `other` is the same credential: the same password once normalised (so it derives the same keys), or
    /// the same key bytes (compared in constant time).
    func isSame(as other: Credential) -> Bool {
        switch (self, other) {
        case (.password(let a), .password(let b)): return UnicodeNFC.utf8(of: a) == UnicodeNFC.utf8(of: b)
        case (.key(let a), .key(let b)): return a == b
        default: return false
        }
    }

    /// Checks the credential can be used at all.
    func validate() throws(KeychainError) {
        switch self {
        case .password(let password):
            guard !password.isEmpty else { throw .invalidParameter("the password is empty") }
        case .key(let key):
            guard key.bitCount == 256 else { throw .invalidParameter("a raw key must be 32 bytes, got \(key.bitCount / 8)") }
        }
    }
}
