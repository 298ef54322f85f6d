import Foundation
import Testing
@testable import KeychainCrypto

/// AES-CBC: NIST's AESAVS CBC files without padding, and OpenSSL's (Python `cryptography`) PKCS #7-padded
/// ciphertexts (Fixtures/crypto/openssl/aes_cbc_pkcs7.json, Scripts/vectors/pkcs12_crypto_vectors.py).
@Suite("AES-CBC with PKCS #7 padding")
struct AESCBCTests {
    struct PaddedFile: Decodable {
        struct Case: Decodable { let key: Hex; let iv: Hex; let plaintext: Hex; let ciphertext: Hex }
        let cases: [Case]
    }

    @Test("NIST AESAVS AES-256 CBC files (unpadded), both directions", arguments: [
        "CBCGFSbox256.rsp", "CBCKeySbox256.rsp", "CBCVarKey256.rsp", "CBCVarTxt256.rsp", "CBCMMT256.rsp",
    ])
    func nist(file: String) throws {
        let records = try Fixtures.responseFile("aes/nist/" + file).filter { $0.fields["COUNT"] != nil }
        #expect(records.count > 0)
        for record in records {
            let key = SymmetricKey(data: try record.hex("KEY"))
            let iv = try record.hex("IV")
            let plaintext = try record.hex("PLAINTEXT")
            let ciphertext = try record.hex("CIPHERTEXT")
            if record.section == "[ENCRYPT]" {
                #expect(try AES.CBC.encrypt(plaintext, using: key, iv: iv, pkcs7Padding: false) == ciphertext)
            } else {
                #expect(try AES.CBC.decrypt(ciphertext, using: key, iv: iv, pkcs7Padding: false) == plaintext)
            }
        }
    }

    @Test("OpenSSL's padded ciphertexts, 0 to 70 bytes, AES-128/192/256: encrypt and decrypt")
    func padded() throws {
        let file = try Fixtures.json(PaddedFile.self, "openssl/aes_cbc_pkcs7.json")
        #expect(file.cases.count == 41)
        for item in file.cases {
            let key = SymmetricKey(data: item.key.bytes)
            #expect(try AES.CBC.encrypt(item.plaintext.bytes, using: key, iv: item.iv.bytes) == item.ciphertext.bytes)
            #expect(try AES.CBC.decrypt(item.ciphertext.bytes, using: key, iv: item.iv.bytes) == item.plaintext.bytes)
        }
    }

    @Test("every padding byte is checked: each wrong last block is refused, each right one accepted")
    func paddingCheck() throws {
        let key = SymmetricKey(data: [UInt8](repeating: 7, count: 32))
        let iv = [UInt8](repeating: 1, count: 16)
        // Build last blocks directly: encrypt chosen plaintext blocks without padding, then decrypt with.
        for pad in 0...17 {
            for corrupt in -1..<16 {
                var block = [UInt8](repeating: 0x41, count: 16)
                let length = min(max(pad, 0), 16)
                for index in (16 - length)..<16 { block[index] = UInt8(pad) }
                if corrupt >= 0 { block[corrupt] ^= 0x80 }
                let valid = (1...16).contains(pad) && (corrupt < 0 || corrupt < 16 - pad)
                let ciphertext = try AES.CBC.encrypt(block, using: key, iv: iv, pkcs7Padding: false)
                if valid {
                    var expected = block
                    expected.removeLast(pad)
                    #expect(try AES.CBC.decrypt(ciphertext, using: key, iv: iv) == expected, "pad \(pad) corrupt \(corrupt)")
                } else {
                    #expect(throws: CryptoKitError.authenticationFailure, "pad \(pad) corrupt \(corrupt)") {
                        try AES.CBC.decrypt(ciphertext, using: key, iv: iv)
                    }
                }
            }
        }
    }

    @Test("wrong sizes are typed errors; a wrong key does not return plaintext with padding it cannot check")
    func sizes() throws {
        let key = SymmetricKey(data: [UInt8](repeating: 7, count: 32))
        let iv = [UInt8](repeating: 0, count: 16)
        #expect(throws: CryptoKitError.incorrectParameterSize) { try AES.CBC.encrypt([1], using: key, iv: [0]) }
        #expect(throws: CryptoKitError.incorrectParameterSize) { try AES.CBC.encrypt([1], using: key, iv: iv, pkcs7Padding: false) }
        #expect(throws: CryptoKitError.incorrectParameterSize) { try AES.CBC.decrypt([], using: key, iv: iv) }
        #expect(throws: CryptoKitError.incorrectParameterSize) { try AES.CBC.decrypt([UInt8](repeating: 0, count: 17), using: key, iv: iv) }
        #expect(throws: CryptoKitError.incorrectKeySize) { try AES.CBC.encrypt([1], using: SymmetricKey(data: [1, 2]), iv: iv) }
        #expect(try AES.CBC.encrypt([], using: key, iv: iv).count == 16)
    }
}
