@testable import KeychainCrypto
@testable import KeychainFile

/// The credentials of every file the open targets seal themselves (their structured inputs, and the whole-file
/// seeds and regression fixtures written from them with FUZZ_WRITE_KEYCHAIN): a raw key, which opens with HKDF
/// only, and a password whose slot asks for one PBKDF2 iteration.
enum FuzzCredentials {
    /// 32 bytes of 0x4B.
    static let key = Credential.key(SymmetricKey(data: [UInt8](repeating: 0x4B, count: 32)))
    static let password = Credential.password("fuzz")
}
