import Foundation
import Testing
@testable import KeychainCrypto

/// Triple-DES CBC decryption: the published TDEA and DES known answers (Fixtures/crypto/tdea, NIST SP 800-67
/// and SP 800-20) and OpenSSL's padded ciphertexts (Fixtures/crypto/openssl/des_ede3_cbc.json, made by
/// `openssl enc` through Scripts/vectors/pkcs12_crypto_vectors.py).
@Suite("Insecure.TripleDES (CBC decryption)")
struct TripleDESTests {
    struct PublishedFile: Decodable {
        struct Case: Decodable { let name: String; let key: Hex; let plaintext: Hex; let ciphertext: Hex }
        let cases: [Case]
    }
    struct OpenSSLFile: Decodable {
        struct Case: Decodable { let cipher: String; let key: Hex; let iv: Hex; let plaintext: Hex; let ciphertext: Hex }
        let cases: [Case]
    }

    @Test("SP 800-67's example and SP 800-20's known answers, block by block (ECB as CBC with a zero IV)")
    func published() throws {
        let file = try Fixtures.json(PublishedFile.self, "tdea/sp800-67-sp800-20.json")
        #expect(file.cases.count == 12)
        for item in file.cases {
            let key = SymmetricKey(data: item.key.bytes)
            let ciphertext = item.ciphertext.bytes
            var plaintext: [UInt8] = []
            for offset in stride(from: 0, to: ciphertext.count, by: 8) {
                plaintext += try Insecure.TripleDES.CBC.decrypt(ciphertext[offset..<offset + 8], using: key,
                                                                iv: [UInt8](repeating: 0, count: 8), pkcs7Padding: false)
            }
            #expect(plaintext == item.plaintext.bytes, "\(item.name)")
        }
    }

    @Test("OpenSSL's padded ciphertexts, 0 to 40 bytes, three-key and two-key")
    func openssl() throws {
        let file = try Fixtures.json(OpenSSLFile.self, "openssl/des_ede3_cbc.json")
        #expect(file.cases.count == 29)
        #expect(Set(file.cases.map(\.cipher)) == ["des-ede3-cbc", "des-ede-cbc"])
        for item in file.cases {
            let opened = try Insecure.TripleDES.CBC.decrypt(item.ciphertext.bytes, using: SymmetricKey(data: item.key.bytes),
                                                            iv: item.iv.bytes)
            #expect(opened == item.plaintext.bytes, "\(item.cipher) \(item.plaintext.bytes.count) bytes")
        }
    }

    @Test("wrong sizes, a wrong key and altered padding are errors, never plaintext")
    func refusals() throws {
        let item = try #require(try Fixtures.json(OpenSSLFile.self, "openssl/des_ede3_cbc.json").cases.first { $0.plaintext.bytes.count == 20 })
        let key = SymmetricKey(data: item.key.bytes)
        for size in [0, 8, 15, 17, 23, 25, 32] {
            #expect(throws: CryptoKitError.incorrectKeySize) {
                try Insecure.TripleDES.CBC.decrypt(item.ciphertext.bytes, using: SymmetricKey(data: [UInt8](repeating: 1, count: size)), iv: item.iv.bytes)
            }
        }
        #expect(throws: CryptoKitError.incorrectParameterSize) { try Insecure.TripleDES.CBC.decrypt(item.ciphertext.bytes, using: key, iv: [0, 1]) }
        #expect(throws: CryptoKitError.incorrectParameterSize) { try Insecure.TripleDES.CBC.decrypt(item.ciphertext.bytes.dropLast(), using: key, iv: item.iv.bytes) }
        #expect(throws: CryptoKitError.incorrectParameterSize) { try Insecure.TripleDES.CBC.decrypt([], using: key, iv: item.iv.bytes) }
        #expect(try Insecure.TripleDES.CBC.decrypt([], using: key, iv: item.iv.bytes, pkcs7Padding: false) == [])
        var wrongKey = item.key.bytes
        wrongKey[3] ^= 0x10  // not a parity bit
        var refused = 0
        for candidate in [wrongKey] + (0..<50).map({ index in item.key.bytes.map { $0 ^ UInt8(truncatingIfNeeded: index * 2 + 2) } }) {
            do {
                let opened = try Insecure.TripleDES.CBC.decrypt(item.ciphertext.bytes, using: SymmetricKey(data: candidate), iv: item.iv.bytes)
                #expect(opened != item.plaintext.bytes)
            } catch {
                #expect(error == .authenticationFailure)
                refused += 1
            }
        }
        #expect(refused > 40)
        // The padding is 4 bytes of 4.
        // A last byte of 1 is valid padding (the plaintext then ends with 4, 4, 4); every other value is not.
        for value in 0...255 where value != 4 && value != 1 {
            var altered = item.ciphertext.bytes
            let last = altered.count - 9  // the last byte of the previous block flips the last plaintext byte
            altered[last] ^= UInt8(value ^ 4)
            #expect(throws: CryptoKitError.authenticationFailure) {
                try Insecure.TripleDES.CBC.decrypt(altered, using: key, iv: item.iv.bytes)
            }
        }
    }

    @Test("the parity bits of the key are ignored, as DES ignores them")
    func parity() throws {
        let item = try #require(try Fixtures.json(OpenSSLFile.self, "openssl/des_ede3_cbc.json").cases.first)
        let flipped = item.key.bytes.map { $0 ^ 1 }
        #expect(try Insecure.TripleDES.CBC.decrypt(item.ciphertext.bytes, using: SymmetricKey(data: flipped), iv: item.iv.bytes)
                == item.plaintext.bytes)
    }
}
