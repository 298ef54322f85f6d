import Foundation
import Testing
@testable import KeychainCrypto

/// RC2 CBC decryption: RFC 2268 §5's test vectors (Fixtures/crypto/rc2/rfc2268.json) and OpenSSL's padded
/// ciphertexts with 40, 64 and 128 effective key bits (Fixtures/crypto/openssl/rc2_cbc.json, made by
/// `openssl enc` through Scripts/vectors/pkcs12_crypto_vectors.py).
@Suite("Insecure.RC2 (CBC decryption)")
struct RC2Tests {
    struct PublishedFile: Decodable {
        struct Case: Decodable {
            let name: String; let key: Hex; let effective_key_bits: Int; let plaintext: Hex; let ciphertext: Hex
        }
        let cases: [Case]
    }
    struct OpenSSLFile: Decodable {
        struct Case: Decodable {
            let cipher: String; let key: Hex; let iv: Hex; let plaintext: Hex; let ciphertext: Hex; let effective_key_bits: Int
        }
        let cases: [Case]
    }

    @Test("RFC 2268's eight vectors: key lengths 1 to 33 bytes, effective key bits 63 to 129")
    func published() throws {
        let file = try Fixtures.json(PublishedFile.self, "rc2/rfc2268.json")
        #expect(file.cases.count == 8)
        for item in file.cases {
            let opened = try Insecure.RC2.CBC.decrypt(item.ciphertext.bytes, using: SymmetricKey(data: item.key.bytes),
                                                      effectiveKeyBits: item.effective_key_bits,
                                                      iv: [UInt8](repeating: 0, count: 8), pkcs7Padding: false)
            #expect(opened == item.plaintext.bytes, "\(item.name)")
        }
    }

    @Test("OpenSSL's padded ciphertexts, 0 to 40 bytes: RC2-40, RC2-64 and RC2-128")
    func openssl() throws {
        let file = try Fixtures.json(OpenSSLFile.self, "openssl/rc2_cbc.json")
        #expect(file.cases.count == 29)
        #expect(Set(file.cases.map(\.effective_key_bits)) == [40, 64, 128])
        for item in file.cases {
            let opened = try Insecure.RC2.CBC.decrypt(item.ciphertext.bytes, using: SymmetricKey(data: item.key.bytes),
                                                      effectiveKeyBits: item.effective_key_bits, iv: item.iv.bytes)
            #expect(opened == item.plaintext.bytes, "\(item.cipher) \(item.plaintext.bytes.count) bytes")
        }
    }

    @Test("wrong sizes and altered ciphertext are errors, never plaintext")
    func refusals() throws {
        let item = try #require(try Fixtures.json(OpenSSLFile.self, "openssl/rc2_cbc.json").cases.first { $0.plaintext.bytes.count == 20 })
        let key = SymmetricKey(data: item.key.bytes)
        let bits = item.effective_key_bits
        #expect(throws: CryptoKitError.incorrectKeySize) {
            try Insecure.RC2.CBC.decrypt(item.ciphertext.bytes, using: SymmetricKey(data: []), effectiveKeyBits: bits, iv: item.iv.bytes)
        }
        #expect(throws: CryptoKitError.incorrectKeySize) {
            try Insecure.RC2.CBC.decrypt(item.ciphertext.bytes, using: SymmetricKey(data: [UInt8](repeating: 1, count: 129)),
                                         effectiveKeyBits: bits, iv: item.iv.bytes)
        }
        for effective in [0, -1, 1025] {
            #expect(throws: CryptoKitError.incorrectParameterSize) {
                try Insecure.RC2.CBC.decrypt(item.ciphertext.bytes, using: key, effectiveKeyBits: effective, iv: item.iv.bytes)
            }
        }
        #expect(throws: CryptoKitError.incorrectParameterSize) {
            try Insecure.RC2.CBC.decrypt(item.ciphertext.bytes, using: key, effectiveKeyBits: bits, iv: [UInt8](repeating: 0, count: 16))
        }
        #expect(throws: CryptoKitError.incorrectParameterSize) {
            try Insecure.RC2.CBC.decrypt(item.ciphertext.bytes.dropLast(3), using: key, effectiveKeyBits: bits, iv: item.iv.bytes)
        }
        // The effective key length matters: the same key with other effective bits decrypts to other bytes.
        let other = try? Insecure.RC2.CBC.decrypt(item.ciphertext.bytes, using: key, effectiveKeyBits: bits + 1, iv: item.iv.bytes)
        #expect(other != item.plaintext.bytes)
        // A last byte of 1 is valid padding (the plaintext then ends with 4, 4, 4); every other value is not.
        for value in 0...255 where value != 4 && value != 1 {
            var altered = item.ciphertext.bytes
            altered[altered.count - 9] ^= UInt8(value ^ 4)
            #expect(throws: CryptoKitError.authenticationFailure) {
                try Insecure.RC2.CBC.decrypt(altered, using: key, effectiveKeyBits: bits, iv: item.iv.bytes)
            }
        }
    }
}
