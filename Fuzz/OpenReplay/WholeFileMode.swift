@testable import KeychainCrypto
@testable import KeychainFile

/// Mode (a): the input is a whole keychain file, opened as it is with the credentials of Fixtures/v1 — the
/// corpus is seeded from those fixtures, so mutations of their records are replayed behind a valid header.
///
/// PBKDF2: a file may ask for up to 10,000,000 iterations per password slot (20,000,000 per header), which
/// would make one execution take seconds. The fuzzer cannot forge a slot (its parameters are authenticated
/// with the wrapped key), so the only password slots that can ever open are the fixtures' own, with 1,000
/// iterations. The password is therefore tried only when the header parses and its password slots ask for
/// at most ``passwordIterationBudget`` iterations together; larger counts are still parsed and range-checked
/// by the raw-key open, which needs no PBKDF2 at all (raw-key slots use HKDF).
enum WholeFileMode {
    /// The application key of the raw-key fixtures (Fixtures/v1/raw-key.json, two-key-slots.json).
    static let fixtureKey = Credential.key(SymmetricKey(data: hexBytes("030a11181f262d343b424950575e656c737a81888f969da4abb2b9c0c7ced5dc")))
    /// The password of most fixtures (Fixtures/v1/generic-password.json and others).
    static let fixturePassword = Credential.password("correct horse battery staple")
    /// One fixture slot (1,000 iterations) plus a little: enough for every fixture, cheap enough to fuzz.
    static let passwordIterationBudget: UInt64 = 2_000

    static func run(_ bytes: [UInt8]) {
        OpenedKeychainChecks<FormatV1Checks>.run(bytes, credential: fixtureKey, depth: .full)
        if passwordIterations(of: bytes).map({ $0 <= passwordIterationBudget }) ?? true {
            OpenedKeychainChecks<FormatV1Checks>.run(bytes, credential: fixturePassword, depth: .full)
        }
    }

    /// The PBKDF2 iterations the header's password slots ask for together, or `nil` if the header does not
    /// parse (then opening fails before any key derivation, so trying the password costs nothing).
    static func passwordIterations(of bytes: [UInt8]) -> UInt64? {
        guard bytes.count >= FileHeader.Prefix.size, let prefix = try? FileHeader.Prefix(Array(bytes.prefix(FileHeader.Prefix.size))),
              bytes.count >= prefix.headerLength,
              let header = try? FileHeader.parse(Array(bytes.prefix(prefix.headerLength)))
        else { return nil }
        return header.slots.reduce(0) { $0 + UInt64($1.iterations) }
    }
}

func hexBytes(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}
