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
}
