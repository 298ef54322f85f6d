import Foundation
import Testing
@testable import KeychainCrypto

@Suite("HKDF-SHA256")
struct HKDFTests {
    struct RFCFile: Decodable {
        struct Case: Decodable { let name: String; let ikm: Hex; let salt: Hex; let info: Hex; let length: Int; let prk: Hex; let okm: Hex }
        let cases: [Case]
    }

    struct DifferentialFile: Decodable {
        struct Case: Decodable { let ikm: Hex; let salt: Hex; let info: Hex; let length: Int; let okm: Hex }
        let cases: [Case]
    }

    struct WycheproofFile: Decodable {
        struct Group: Decodable { let tests: [Test] }
        struct Test: Decodable { let tcId: Int; let ikm: Hex; let salt: Hex; let info: Hex; let size: Int; let okm: Hex; let result: String }
        let testGroups: [Group]
    }

    static func bytes(of key: SymmetricKey) -> [UInt8] { key.withUnsafeBytes { Array($0) } }

    @Test("RFC 5869 test cases 1–3: PRK and OKM")
    func rfc5869() throws {
        let file = try Fixtures.json(RFCFile.self, "hkdf/rfc5869.json")
        #expect(file.cases.count == 3)
        for vector in file.cases {
            let ikm = SymmetricKey(data: vector.ikm.bytes)
            let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: vector.salt.bytes)
            #expect(Array(prk) == vector.prk.bytes, "\(vector.name) PRK")
            let okm = try HKDF<SHA256>.expand(pseudoRandomKey: prk, info: vector.info.bytes, outputByteCount: vector.length)
            #expect(Self.bytes(of: okm) == vector.okm.bytes, "\(vector.name) OKM")
            let derived = try HKDF<SHA256>.deriveKey(
                inputKeyMaterial: ikm, salt: vector.salt.bytes, info: vector.info.bytes, outputByteCount: vector.length)
            #expect(Self.bytes(of: derived) == vector.okm.bytes, "\(vector.name) derive")
        }
    }

    @Test("Wycheproof hkdf_sha256_test.json")
    func wycheproof() throws {
        let file = try Fixtures.json(WycheproofFile.self, "wycheproof/hkdf_sha256_test.json")
        var checked = 0
        for test in file.testGroups.flatMap(\.tests) {
            let ikm = SymmetricKey(data: test.ikm.bytes)
            if test.result == "valid" {
                let okm = try HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: test.salt.bytes, info: test.info.bytes, outputByteCount: test.size)
                #expect(Self.bytes(of: okm) == test.okm.bytes, "tcId \(test.tcId)")
            } else {
                // The invalid cases ask for more than 255 hash lengths: refused with a typed error.
                #expect(throws: CryptoKitError.incorrectParameterSize, "tcId \(test.tcId)") {
                    try HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: test.salt.bytes, info: test.info.bytes, outputByteCount: test.size)
                }
            }
            checked += 1
        }
        #expect(checked == 86)
    }

    @Test("300 random cases against OpenSSL")
    func differential() throws {
        let file = try Fixtures.json(DifferentialFile.self, "openssl/hkdf_sha256.json")
        #expect(file.cases.count == 300)
        for (index, vector) in file.cases.enumerated() {
            let okm = try HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: vector.ikm.bytes), salt: vector.salt.bytes,
                info: vector.info.bytes, outputByteCount: vector.length)
            #expect(Self.bytes(of: okm) == vector.okm.bytes, "case \(index)")
        }
    }

    @Test("Output lengths outside 0 … 8160 are a typed error")
    func outputLimits() throws {
        let ikm = SymmetricKey(data: [UInt8](repeating: 1, count: 32))
        #expect(throws: CryptoKitError.incorrectParameterSize) { try HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, outputByteCount: 8161) }
        #expect(throws: CryptoKitError.incorrectParameterSize) { try HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, outputByteCount: -1) }
        #expect(try HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, outputByteCount: 8160).bitCount == 8160 * 8)
        #expect(try HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, outputByteCount: 0).bitCount == 0)
    }
}
