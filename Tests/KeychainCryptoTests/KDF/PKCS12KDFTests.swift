import Foundation
import Testing
@testable import KeychainCrypto

/// The PKCS #12 key derivation (RFC 7292 B.2) against `openssl kdf PKCS12KDF` (Fixtures/crypto/openssl/pkcs12_kdf.json,
/// Scripts/vectors/pkcs12_crypto_vectors.py): SHA-256 and SHA-1, IDs 1 to 3, empty and long passwords and salts.
@Suite("PKCS #12 key derivation")
struct PKCS12KDFTests {
    struct VectorFile: Decodable {
        struct Case: Decodable {
            let hash: String; let id: UInt8; let password: String; let bmp_password: Hex; let salt: Hex
            let iterations: Int; let length: Int; let output: Hex
        }
        let cases: [Case]
    }

    @Test("OpenSSL's PKCS12KDF outputs, and the BMPString form of each password")
    func openSSL() throws {
        let file = try Fixtures.json(VectorFile.self, "openssl/pkcs12_kdf.json")
        #expect(file.cases.count == 18)
        for item in file.cases {
            let password = KDF.Insecure.PKCS12.bmpPassword(item.password)
            #expect(password == item.bmp_password.bytes)
            let purpose = try #require(KDF.Insecure.PKCS12.Purpose(rawValue: item.id))
            let key = item.hash == "sha256"
                ? try KDF.Insecure.PKCS12.deriveKey(SHA256.self, password: password, salt: item.salt.bytes, purpose: purpose,
                                                    iterations: item.iterations, outputByteCount: item.length)
                : try KDF.Insecure.PKCS12.deriveKey(Insecure.SHA1.self, password: password, salt: item.salt.bytes, purpose: purpose,
                                                    iterations: item.iterations, outputByteCount: item.length)
            #expect(key.withUnsafeBytes { Array($0) } == item.output.bytes, "\(item.hash) id \(item.id) \(item.password)")
        }
    }

    @Test("iterations below 1 and output lengths out of range are typed errors")
    func ranges() {
        for (iterations, length) in [(0, 32), (1, 0), (1, 1025), (-5, 32)] {
            #expect(throws: CryptoKitError.incorrectParameterSize) {
                try KDF.Insecure.PKCS12.deriveKey(SHA256.self, password: [0, 0], salt: [], purpose: .mac,
                                                  iterations: iterations, outputByteCount: length)
            }
        }
    }
}
