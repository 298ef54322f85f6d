import Foundation
import Testing
@testable import KeychainCrypto

@Suite("PBKDF2-HMAC-SHA256")
struct PBKDF2Tests {
    struct RFCFile: Decodable {
        struct Case: Decodable { let name: String; let password: Hex; let salt: Hex; let iterations: Int; let dklen: Int; let dk: Hex }
        let cases: [Case]
    }

    struct DifferentialFile: Decodable {
        struct Case: Decodable { let password: Hex; let salt: Hex; let iterations: Int; let dklen: Int; let dk: Hex }
        let cases: [Case]
    }

    struct WycheproofFile: Decodable {
        struct Group: Decodable { let tests: [Test] }
        struct Test: Decodable {
            let tcId: Int; let password: Hex; let salt: Hex; let iterationCount: Int; let dkLen: Int; let dk: Hex; let result: String
        }
        let testGroups: [Group]
    }

    static func derive(_ password: [UInt8], _ salt: [UInt8], _ rounds: Int, _ length: Int) throws -> [UInt8] {
        try KDF.Insecure.PBKDF2.deriveKey(
            from: password, salt: salt, using: .sha256, outputByteCount: length, unsafeUncheckedRounds: rounds
        ).withUnsafeBytes { Array($0) }
    }

    @Test("RFC 7914 §11 vectors (c = 1 and c = 80,000)")
    func rfc7914() throws {
        let file = try Fixtures.json(RFCFile.self, "pbkdf2/rfc7914.json")
        #expect(file.cases.count == 2)
        for vector in file.cases {
            let dk = try Self.derive(vector.password.bytes, vector.salt.bytes, vector.iterations, vector.dklen)
            #expect(dk == vector.dk.bytes, "\(vector.name)")
        }
    }

    @Test("Wycheproof pbkdf2_hmacsha256_test.json")
    func wycheproof() throws {
        let file = try Fixtures.json(WycheproofFile.self, "wycheproof/pbkdf2_hmacsha256_test.json")
        var checked = 0
        for test in file.testGroups.flatMap(\.tests) {
            let dk = try Self.derive(test.password.bytes, test.salt.bytes, test.iterationCount, test.dkLen)
            #expect((dk == test.dk.bytes) == (test.result == "valid"), "tcId \(test.tcId)")
            checked += 1
        }
        #expect(checked == 60)
    }

    @Test("200 random cases against OpenSSL (1–64 rounds, multi-block outputs)")
    func differential() throws {
        let file = try Fixtures.json(DifferentialFile.self, "openssl/pbkdf2_sha256.json")
        #expect(file.cases.count == 200)
        for (index, vector) in file.cases.enumerated() {
            let dk = try Self.derive(vector.password.bytes, vector.salt.bytes, vector.iterations, vector.dklen)
            #expect(dk == vector.dk.bytes, "case \(index)")
        }
    }

    @Test("The checked variant refuses fewer than 210,000 rounds; bad sizes are typed errors")
    func limits() throws {
        #expect(throws: CryptoKitError.incorrectParameterSize) {
            try KDF.Insecure.PBKDF2.deriveKey(from: [1], salt: [2], using: .sha256, outputByteCount: 32, rounds: 209_999)
        }
        #expect(throws: CryptoKitError.incorrectParameterSize) { try Self.derive([1], [2], 0, 32) }
        #expect(throws: CryptoKitError.incorrectParameterSize) { try Self.derive([1], [2], 1, 0) }
        #expect(throws: CryptoKitError.incorrectParameterSize) { try Self.derive([1], [2], -5, 32) }
        // The minimum itself is accepted, and agrees with the unchecked variant.
        let checked = try KDF.Insecure.PBKDF2.deriveKey(from: [1], salt: [2], using: .sha256, outputByteCount: 32, rounds: 210_000)
        #expect(checked.withUnsafeBytes { Array($0) } == (try Self.derive([1], [2], 210_000, 32)))
    }
}
