import Foundation
import Testing
@testable import KeychainCrypto

@Suite("HMAC-SHA256")
struct HMACTests {
    struct RFCFile: Decodable {
        struct Case: Decodable { let name: String; let key: Hex; let data: Hex; let mac: Hex; let truncate_bytes: Int? }
        let cases: [Case]
    }

    struct DifferentialFile: Decodable {
        struct Case: Decodable { let key: Hex; let data: Hex; let mac: Hex }
        let cases: [Case]
    }

    struct WycheproofFile: Decodable {
        struct Group: Decodable { let keySize: Int; let tagSize: Int; let tests: [Test] }
        struct Test: Decodable { let tcId: Int; let key: Hex; let msg: Hex; let tag: Hex; let result: String }
        let testGroups: [Group]
    }

    @Test("RFC 4231 test cases 1–7 (case 5 truncated to 128 bits)")
    func rfc4231() throws {
        let file = try Fixtures.json(RFCFile.self, "hmac/rfc4231.json")
        #expect(file.cases.count == 7)
        for vector in file.cases {
            let mac = Array(HMAC<SHA256>.authenticationCode(for: vector.data.bytes, using: SymmetricKey(data: vector.key.bytes)))
            let compared = vector.truncate_bytes.map { Array(mac.prefix($0)) } ?? mac
            #expect(compared == vector.mac.bytes, "\(vector.name)")
        }
    }

    @Test("Wycheproof hmac_sha256_test.json: valid tags verify, invalid ones do not")
    func wycheproof() throws {
        let file = try Fixtures.json(WycheproofFile.self, "wycheproof/hmac_sha256_test.json")
        var checked = 0
        for group in file.testGroups {
            for test in group.tests {
                let key = SymmetricKey(data: test.key.bytes)
                let full = Array(HMAC<SHA256>.authenticationCode(for: test.msg.bytes, using: key))
                let truncated = Array(full.prefix(group.tagSize / 8))
                let matches = truncated == test.tag.bytes
                #expect(matches == (test.result == "valid"), "tcId \(test.tcId)")
                if group.tagSize == 256 {
                    #expect(
                        HMAC<SHA256>.isValidAuthenticationCode(test.tag.bytes, authenticating: test.msg.bytes, using: key)
                            == (test.result == "valid"), "tcId \(test.tcId)")
                }
                checked += 1
            }
        }
        #expect(checked == 174)
    }

    @Test("400 random keys and messages against OpenSSL, one-shot and streamed")
    func differential() throws {
        let file = try Fixtures.json(DifferentialFile.self, "openssl/hmac_sha256.json")
        #expect(file.cases.count == 400)
        var generator = SeededGenerator(seed: 0x484d_4143)
        for (index, vector) in file.cases.enumerated() {
            let key = SymmetricKey(data: vector.key.bytes)
            #expect(Array(HMAC<SHA256>.authenticationCode(for: vector.data.bytes, using: key)) == vector.mac.bytes, "case \(index)")
            var streamed = HMAC<SHA256>(key: key)
            for piece in randomSplit(vector.data.bytes, using: &generator) { streamed.update(data: piece) }
            #expect(Array(streamed.finalize()) == vector.mac.bytes, "case \(index) streamed")
        }
    }

    @Test("A precomputed keyed state is reusable for many messages")
    func keyedStateReuse() throws {
        let file = try Fixtures.json(DifferentialFile.self, "openssl/hmac_sha256.json")
        let sameKey = file.cases.filter { $0.key.bytes == file.cases[0].key.bytes }
        let keyed = HMAC<SHA256>(key: SymmetricKey(data: file.cases[0].key.bytes))
        for vector in sameKey {
            var mac = keyed
            mac.update(data: vector.data.bytes)
            #expect(Array(mac.finalize()) == vector.mac.bytes)
        }
        // Using the keyed state for one message must not disturb it for the next.
        var first = keyed
        first.update(data: [1, 2, 3])
        _ = first.finalize()
        var second = keyed
        second.update(data: [1, 2, 3])
        #expect(first.finalize() == second.finalize())
    }

    @Test("Wrong key, message or tag length does not verify")
    func rejects() {
        let key = SymmetricKey(data: [UInt8](repeating: 0x0b, count: 20))
        let message = Array("Hi There".utf8)
        let tag = HMAC<SHA256>.authenticationCode(for: message, using: key)
        #expect(HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: message, using: key))
        #expect(!HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: message + [0], using: key))
        #expect(!HMAC<SHA256>.isValidAuthenticationCode(tag, authenticating: message, using: SymmetricKey(data: [UInt8](repeating: 0x0c, count: 20))))
        var flipped = Array(tag)
        flipped[31] ^= 1
        #expect(!HMAC<SHA256>.isValidAuthenticationCode(flipped, authenticating: message, using: key))
        #expect(!HMAC<SHA256>.isValidAuthenticationCode(Array(tag).prefix(16), authenticating: message, using: key))
        #expect(!HMAC<SHA256>.isValidAuthenticationCode([UInt8](), authenticating: message, using: key))
    }
}
