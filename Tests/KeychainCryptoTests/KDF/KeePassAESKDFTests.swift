import Testing
import KeychainTestSupport
@testable import KeychainCrypto

@Suite("KeePass AES-KDF")
struct KeePassAESKDFTests {
    /// The expected value is Python's: pycryptodome's AES-256-ECB run 1,000 times over the key, then hashlib's
    /// SHA-256 (as pykeepass's aes_kdf does).
    @Test("1,000 rounds of AES-256-ECB then SHA-256 match pycryptodome and hashlib")
    func matchesPython() throws {
        let transformed = try KDF.KeePassAES.transform([UInt8](0..<32), seed: [UInt8](100..<132), rounds: 1000)
        #expect(transformed.hexString == "574a35247b170712b18df2ec577ceb64d3e20bb09f52353b38d69ce71936eca2")
    }

    @Test("zero rounds is SHA-256 of the key; wrong sizes and too many rounds are refused")
    func edges() throws {
        #expect(try KDF.KeePassAES.transform([UInt8](0..<32), seed: [UInt8](100..<132), rounds: 0) == Array(SHA256.hash(data: [UInt8](0..<32))))
        #expect(throws: CryptoKitError.incorrectParameterSize) { try KDF.KeePassAES.transform([UInt8](0..<31), seed: [UInt8](100..<132), rounds: 1) }
        #expect(throws: CryptoKitError.invalidParameter) {
            try KDF.KeePassAES.transform([UInt8](0..<32), seed: [UInt8](100..<132), rounds: KDF.KeePassAES.maximumRounds + 1)
        }
    }
}
