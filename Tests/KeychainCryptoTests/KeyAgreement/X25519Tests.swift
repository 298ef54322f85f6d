import Foundation
import Testing
@testable import KeychainCrypto

@Suite("X25519")
struct X25519Tests {
    struct RFCFile: Decodable {
        struct Case: Decodable { let name: String; let scalar: Hex; let u: Hex; let iterations: Int; let output: Hex }
        let cases: [Case]
    }

    struct WycheproofFile: Decodable {
        struct Group: Decodable { let curve: String; let tests: [Test] }
        struct Test: Decodable {
            let tcId: Int; let comment: String; let flags: [String]
            let `public`: Hex; let `private`: Hex; let shared: Hex; let result: String
        }
        let testGroups: [Group]
    }

    struct DifferentialFile: Decodable {
        struct Case: Decodable { let `private`: Hex; let own_public: Hex; let peer_public: Hex; let shared: Hex? }
        let cases: [Case]
    }

    /// X25519(scalar, u) through the public API: the public key for the base point, the shared secret otherwise.
    static func x25519(_ scalar: [UInt8], _ u: [UInt8]) throws -> [UInt8] {
        let key = SymmetricKey(data: scalar)
        if u == X25519.basePoint { return try X25519.publicKey(for: key) }
        return bytes(of: try X25519.sharedSecret(privateKey: key, peerPublicKey: u))
    }

    /// The raw X25519 function, without the all-zero check, for the cases the public API refuses.
    static func rawX25519(_ scalar: [UInt8], _ u: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0xAA, count: 32)
        scalar.withUnsafeBytes { k in
            u.withUnsafeBytes { uBytes in
                output.withUnsafeMutableBytes { MontgomeryLadder.x25519(scalar: k.baseAddress!, u: uBytes.baseAddress!, output: $0.baseAddress!) }
            }
        }
        return output
    }

    static func bytes(of key: SymmetricKey) -> [UInt8] { key.withUnsafeBytes { Array($0) } }

    @Test("RFC 7748 §5.2's two vectors, its iterated test after 1 and 1,000 iterations, and §6.1's Alice and Bob")
    func rfc7748() throws {
        let file = try Fixtures.json(RFCFile.self, "x25519/rfc7748.json")
        #expect(file.cases.count == 8)
        for vector in file.cases {
            // The iteration of §5.2: k, u ← X25519(k, u), k.
            var (k, u) = (vector.scalar.bytes, vector.u.bytes)
            for _ in 0..<vector.iterations { (k, u) = (try Self.x25519(k, u), k) }
            #expect(k == vector.output.bytes, "\(vector.name)")
        }
    }

    @Test("Wycheproof x25519_test.json: every valid and acceptable case agrees, and each all-zero secret is refused")
    func wycheproof() throws {
        let file = try Fixtures.json(WycheproofFile.self, "wycheproof/x25519_test.json")
        var agreed = 0, refused = 0
        for group in file.testGroups {
            #expect(group.curve == "curve25519")
            for test in group.tests {
                let key = SymmetricKey(data: test.private.bytes)
                // The file has no invalid cases; if a later copy adds some, this test must be extended.
                #expect(test.result == "valid" || test.result == "acceptable", "tcId \(test.tcId)")
                if test.flags.contains("ZeroSharedSecret") {
                    // RFC 7748 §6.1's check: low-order public keys give zeros, which the API refuses …
                    #expect(test.shared.bytes == [UInt8](repeating: 0, count: 32), "tcId \(test.tcId)")
                    #expect(throws: X25519Error.lowOrderPublicKey, "tcId \(test.tcId)") {
                        try X25519.sharedSecret(privateKey: key, peerPublicKey: test.public.bytes)
                    }
                    // … and the ladder underneath does compute the zeros.
                    #expect(Self.rawX25519(test.private.bytes, test.public.bytes) == test.shared.bytes, "tcId \(test.tcId)")
                    refused += 1
                } else {
                    // Twist points and non-canonical encodings are accepted (RFC 7748 §5 and §7): the result
                    // must be the one the RFC defines.
                    let secret = try X25519.sharedSecret(privateKey: key, peerPublicKey: test.public.bytes)
                    #expect(Self.bytes(of: secret) == test.shared.bytes, "tcId \(test.tcId): \(test.comment)")
                    agreed += 1
                }
            }
        }
        #expect(agreed + refused == 518)
        #expect(refused == 31)
    }

    @Test("300 random cases against OpenSSL: public keys, shared secrets, and the same refusals")
    func differential() throws {
        let file = try Fixtures.json(DifferentialFile.self, "x25519/x25519_openssl.json")
        #expect(file.cases.count == 300)
        var refusals = 0
        for (index, vector) in file.cases.enumerated() {
            let key = SymmetricKey(data: vector.private.bytes)
            #expect(try X25519.publicKey(for: key) == vector.own_public.bytes, "case \(index)")
            if let shared = vector.shared {
                let secret = try X25519.sharedSecret(privateKey: key, peerPublicKey: vector.peer_public.bytes)
                #expect(Self.bytes(of: secret) == shared.bytes, "case \(index)")
            } else {
                refusals += 1
                #expect(throws: X25519Error.lowOrderPublicKey, "case \(index)") {
                    try X25519.sharedSecret(privateKey: key, peerPublicKey: vector.peer_public.bytes)
                }
            }
        }
        #expect(refusals == 8)
    }

    @Test("Two parties agree on the secret, and a different key disagrees")
    func agreement() throws {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<20 {
            let alice = SymmetricKey(size: .bits256, using: &generator)
            let bob = SymmetricKey(size: .bits256, using: &generator)
            let eve = SymmetricKey(size: .bits256, using: &generator)
            let alicePublic = try X25519.publicKey(for: alice), bobPublic = try X25519.publicKey(for: bob)
            let secret = try X25519.sharedSecret(privateKey: alice, peerPublicKey: bobPublic)
            #expect(secret == (try X25519.sharedSecret(privateKey: bob, peerPublicKey: alicePublic)))
            #expect(secret != (try X25519.sharedSecret(privateKey: eve, peerPublicKey: alicePublic)))
            #expect(alicePublic[31] & 0x80 == 0)
        }
    }

    @Test("The peer key's top bit is ignored and non-canonical values mean their value mod p")
    func peerKeyDecoding() throws {
        var generator = SeededGenerator(seed: 11)
        let key = SymmetricKey(size: .bits256, using: &generator)
        let peer = try X25519.publicKey(for: SymmetricKey(size: .bits256, using: &generator))
        var highBit = peer
        highBit[31] |= 0x80
        let expected = Self.bytes(of: try X25519.sharedSecret(privateKey: key, peerPublicKey: peer))
        #expect(Self.bytes(of: try X25519.sharedSecret(privateKey: key, peerPublicKey: highBit)) == expected)
        // p + 9 encodes the base point's u = 9 non-canonically: the shared secret is the public key.
        var pPlus9 = [UInt8](repeating: 0xFF, count: 32)
        pPlus9[0] = 0xED &+ 9
        pPlus9[31] = 0x7F
        #expect(Self.bytes(of: try X25519.sharedSecret(privateKey: key, peerPublicKey: pPlus9)) == (try X25519.publicKey(for: key)))
    }

    @Test("Private keys are clamped: the bits RFC 7748 §5 fixes do not change the result")
    func clamping() throws {
        var generator = SeededGenerator(seed: 13)
        var scalar = SymmetricKey(size: .bits256, using: &generator).withUnsafeBytes { Array($0) }
        let expected = try X25519.publicKey(for: SymmetricKey(data: scalar))
        scalar[0] ^= 0x07
        scalar[31] ^= 0xC0
        #expect(try X25519.publicKey(for: SymmetricKey(data: scalar)) == expected)
        scalar[0] ^= 0x08
        #expect(try X25519.publicKey(for: SymmetricKey(data: scalar)) != expected)
    }

    @Test("Keys of the wrong length are typed errors naming the length")
    func sizes() throws {
        let good = SymmetricKey(data: [UInt8](repeating: 1, count: 32))
        let peer = try X25519.publicKey(for: good)
        for length in [0, 1, 31, 33, 64] {
            let bad = SymmetricKey(data: [UInt8](repeating: 1, count: length))
            #expect(throws: X25519Error.incorrectPrivateKeySize(byteCount: length)) { try X25519.publicKey(for: bad) }
            #expect(throws: X25519Error.incorrectPrivateKeySize(byteCount: length)) {
                try X25519.sharedSecret(privateKey: bad, peerPublicKey: peer)
            }
            #expect(throws: X25519Error.incorrectPublicKeySize(byteCount: length)) {
                try X25519.sharedSecret(privateKey: good, peerPublicKey: [UInt8](repeating: 9, count: length))
            }
        }
        // Any sequence of bytes is accepted as the peer key, contiguous or not.
        let fromSlice = try X25519.sharedSecret(privateKey: good, peerPublicKey: ([0] + peer)[1...])
        let fromSequence = try X25519.sharedSecret(privateKey: good, peerPublicKey: NonContiguousBytes(bytes: peer))
        #expect(fromSlice == fromSequence)
        #expect(X25519Error.lowOrderPublicKey.description.contains("small order"))
        #expect(X25519Error.incorrectPublicKeySize(byteCount: 31).description.contains("31 bytes"))
    }

    /// Edge u-coordinates and scalars (p − 1, p, p + 1, p + 9, 2^255 − 1, bit 255 set, limb boundaries; scalars all
    /// zero and all 0xFF) against Python `cryptography` (OpenSSL) and, where OpenSSL refuses an all-zero result, a
    /// plain RFC 7748 §5 ladder in Python big integers; every pair's expected output is from outside this code.
    static let edgeScalars: [String: String] = [
        "k0": "0000000000000000000000000000000000000000000000000000000000000000",
        "kFF": "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "k1": "0100000000000000000000000000000000000000000000000000000000000000",
        "kA5": "a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5",
    ]
    static let edgeCoordinates: [String: String] = [
        "p-1": "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "p": "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "p+1": "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "p+9": "f6ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "2^255-1": "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "2^255-20": "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "2^255": "0000000000000000000000000000000000000000000000000000000000000080",
        "0": "0000000000000000000000000000000000000000000000000000000000000000",
        "1": "0100000000000000000000000000000000000000000000000000000000000000",
        "9": "0900000000000000000000000000000000000000000000000000000000000000",
        "2^254": "0000000000000000000000000000000000000000000000000000000000000040",
        "2^51-1": "ffffffffffff0700000000000000000000000000000000000000000000000000",
        "2^51": "0000000000000800000000000000000000000000000000000000000000000000",
        "2^204": "0000000000000000000000000000000000000000000000000010000000000000",
        "allFF": "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
        "topbit9": "0900000000000000000000000000000000000000000000000000000000000080",
    ]
    static let edgeOutputs: [(scalar: String, u: String, output: String)] = [
        ("k0", "p-1", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("k0", "p", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("k0", "p+1", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("k0", "p+9", "2fe57da347cd62431528daac5fbb290730fff684afc4cfc2ed90995f58cb3b74"),
        ("k0", "2^255-1", "b32d1362c248d62fe62619cff04dd43db73ffc1b6308ede30b78d87380f1e834"),
        ("k0", "2^255-20", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("k0", "2^255", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("k0", "0", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("k0", "1", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("k0", "9", "2fe57da347cd62431528daac5fbb290730fff684afc4cfc2ed90995f58cb3b74"),
        ("k0", "2^254", "543c21a42729e17049b8d47f7be09a1cc39adf120f2a09bb8ca1c54d383e2407"),
        ("k0", "2^51-1", "c4daa699b7f9086c6e75e2c825fcd563cafeb943c2094b3f52af0e3a7393cb68"),
        ("k0", "2^51", "34c0ed03b535d3a4d054d77405937d72373b8803d79b13600502eb5e9f59863e"),
        ("k0", "2^204", "f9f9a184ac94f9d5ec54c5f60150eb6f6a95964ea78cb9d8e2ae8bdc4d88207c"),
        ("k0", "allFF", "b32d1362c248d62fe62619cff04dd43db73ffc1b6308ede30b78d87380f1e834"),
        ("k0", "topbit9", "2fe57da347cd62431528daac5fbb290730fff684afc4cfc2ed90995f58cb3b74"),
        ("kFF", "p-1", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("kFF", "p", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("kFF", "p+1", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("kFF", "p+9", "847c0d2c375234f365e660955187a3735a0f7613d1609d3a6a4d8c53aeaa5a22"),
        ("kFF", "2^255-1", "96186d56afdbfeda62f0d07168fa8b142b3d8530e9705fd818cfd33591ea927f"),
        ("kFF", "2^255-20", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("kFF", "2^255", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("kFF", "0", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("kFF", "1", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("kFF", "9", "847c0d2c375234f365e660955187a3735a0f7613d1609d3a6a4d8c53aeaa5a22"),
        ("kFF", "2^254", "40dc9d321aa09355716aa4642d60bcc89b6c60af91c816e887ef344dcac69c1e"),
        ("kFF", "2^51-1", "081a8de78b97d6dd98a8b0b2f182193ba49951483db4d8ba48bc45b377c7a65e"),
        ("kFF", "2^51", "9f949315aaca5f47657e1e9b6497d48723b3311f16ac76689b7cdb8120ddad72"),
        ("kFF", "2^204", "3216f733c64c74b142374333e0b2a66db045dbd3dfc5095963d07917fcb0d554"),
        ("kFF", "allFF", "96186d56afdbfeda62f0d07168fa8b142b3d8530e9705fd818cfd33591ea927f"),
        ("kFF", "topbit9", "847c0d2c375234f365e660955187a3735a0f7613d1609d3a6a4d8c53aeaa5a22"),
        ("k1", "p-1", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("k1", "p", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("k1", "p+1", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("k1", "p+9", "2fe57da347cd62431528daac5fbb290730fff684afc4cfc2ed90995f58cb3b74"),
        ("k1", "2^255-1", "b32d1362c248d62fe62619cff04dd43db73ffc1b6308ede30b78d87380f1e834"),
        ("k1", "2^255-20", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("k1", "2^255", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("k1", "0", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("k1", "1", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("k1", "9", "2fe57da347cd62431528daac5fbb290730fff684afc4cfc2ed90995f58cb3b74"),
        ("k1", "2^254", "543c21a42729e17049b8d47f7be09a1cc39adf120f2a09bb8ca1c54d383e2407"),
        ("k1", "2^51-1", "c4daa699b7f9086c6e75e2c825fcd563cafeb943c2094b3f52af0e3a7393cb68"),
        ("k1", "2^51", "34c0ed03b535d3a4d054d77405937d72373b8803d79b13600502eb5e9f59863e"),
        ("k1", "2^204", "f9f9a184ac94f9d5ec54c5f60150eb6f6a95964ea78cb9d8e2ae8bdc4d88207c"),
        ("k1", "allFF", "b32d1362c248d62fe62619cff04dd43db73ffc1b6308ede30b78d87380f1e834"),
        ("k1", "topbit9", "2fe57da347cd62431528daac5fbb290730fff684afc4cfc2ed90995f58cb3b74"),
        ("kA5", "p-1", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("kA5", "p", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("kA5", "p+1", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("kA5", "p+9", "5fef13fc76023a9ee6ded987b6aa93958cdc2097ef9fc845d5319c9ca100d35e"),
        ("kA5", "2^255-1", "5b25a4cdd4a5ed34bd10b68c5d9bebe0ca566eb854b390bb5140a409576e9b67"),
        ("kA5", "2^255-20", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("kA5", "2^255", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("kA5", "0", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("kA5", "1", "0000000000000000000000000000000000000000000000000000000000000000"),
        ("kA5", "9", "5fef13fc76023a9ee6ded987b6aa93958cdc2097ef9fc845d5319c9ca100d35e"),
        ("kA5", "2^254", "83a72e4aecd2847e334cb62ad713b95a82fafe76fe8b1d6e1129eb15c4c5ed54"),
        ("kA5", "2^51-1", "a1657c6517a7077f8ad9401ba1900e598c1d1539edfc276b06b8a315ba8e154c"),
        ("kA5", "2^51", "e86a6de95fdd12539e25687189687ec7beee6893ded6ceb20a0d37e49250f917"),
        ("kA5", "2^204", "7b23a59f314bb7909afccca5ecef743a9ed14dad25db4b844277e128ec07ec29"),
        ("kA5", "allFF", "5b25a4cdd4a5ed34bd10b68c5d9bebe0ca566eb854b390bb5140a409576e9b67"),
        ("kA5", "topbit9", "5fef13fc76023a9ee6ded987b6aa93958cdc2097ef9fc845d5319c9ca100d35e"),
    ]

    static func hexBytes(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    @Test("Edge u-coordinates and scalars agree with OpenSSL and a big-integer ladder; all-zero results are refused")
    func edgeCases() throws {
        #expect(Self.edgeOutputs.count == 64)
        for edge in Self.edgeOutputs {
            let scalar = Self.hexBytes(Self.edgeScalars[edge.scalar]!), u = Self.hexBytes(Self.edgeCoordinates[edge.u]!)
            let expected = Self.hexBytes(edge.output)
            #expect(Self.rawX25519(scalar, u) == expected, "\(edge.scalar), u = \(edge.u)")
            if expected.allSatisfy({ $0 == 0 }) {
                #expect(throws: X25519Error.lowOrderPublicKey) {
                    try X25519.sharedSecret(privateKey: SymmetricKey(data: scalar), peerPublicKey: u)
                }
            } else {
                #expect(try Self.x25519(scalar, u) == expected, "\(edge.scalar), u = \(edge.u)")
            }
        }
    }
}
