import Foundation
import Testing
@testable import KeychainCrypto

@Suite("AES-GCM")
struct AESGCMTests {
    struct SpecFile: Decodable {
        struct Case: Decodable { let name: String; let key: Hex; let iv: Hex; let aad: Hex; let plaintext: Hex; let ciphertext: Hex; let tag: Hex }
        let cases: [Case]
    }

    struct DifferentialFile: Decodable {
        struct Case: Decodable { let key: Hex; let iv: Hex; let aad: Hex; let plaintext: Hex; let ciphertext: Hex; let tag: Hex }
        let cases: [Case]
    }

    struct WycheproofFile: Decodable {
        struct Group: Decodable { let ivSize: Int; let keySize: Int; let tagSize: Int; let tests: [Test] }
        struct Test: Decodable {
            let tcId: Int; let key: Hex; let iv: Hex; let aad: Hex; let msg: Hex; let ct: Hex; let tag: Hex; let result: String
        }
        let testGroups: [Group]
    }

    /// Seals with the given nonce and checks ciphertext and tag; then opens the result.
    static func check(key: [UInt8], iv: [UInt8], aad: [UInt8], plaintext: [UInt8], ciphertext: [UInt8], tag: [UInt8],
                      _ label: String) throws {
        let symmetricKey = SymmetricKey(data: key)
        let nonce = try AES.GCM.Nonce(data: iv)
        let box = try AES.GCM.seal(plaintext, using: symmetricKey, nonce: nonce, authenticating: aad)
        #expect(box.ciphertext == ciphertext, "\(label) ciphertext")
        #expect(box.tag == tag, "\(label) tag")
        #expect(box.combined == iv + ciphertext + tag, "\(label) combined")
        let opened = try AES.GCM.open(try AES.GCM.SealedBox(combined: iv + ciphertext + tag), using: symmetricKey, authenticating: aad)
        #expect(opened == plaintext, "\(label) open")
    }

    @Test("GCM specification test cases 1–18 (13–18 are AES-256; non-96-bit IVs are refused)")
    func specification() throws {
        let file = try Fixtures.json(SpecFile.self, "gcm/gcm-spec.json")
        #expect(file.cases.count == 18)
        var checked = 0
        for vector in file.cases {
            if vector.iv.bytes.count == 12 {
                try Self.check(key: vector.key.bytes, iv: vector.iv.bytes, aad: vector.aad.bytes, plaintext: vector.plaintext.bytes,
                               ciphertext: vector.ciphertext.bytes, tag: vector.tag.bytes, vector.name)
                checked += 1
            } else {
                #expect(throws: CryptoKitError.incorrectParameterSize, "\(vector.name)") { try AES.GCM.Nonce(data: vector.iv.bytes) }
            }
        }
        #expect(checked == 12)
    }

    @Test("Wycheproof aes_gcm_test.json: every 96-bit-IV case; invalid ones fail to open")
    func wycheproof() throws {
        let file = try Fixtures.json(WycheproofFile.self, "wycheproof/aes_gcm_test.json")
        var valid = 0, invalid = 0, refusedIV = 0
        for group in file.testGroups {
            #expect(group.tagSize == 128)
            for test in group.tests {
                let key = SymmetricKey(data: test.key.bytes)
                guard group.ivSize == 96 else {
                    #expect(throws: CryptoKitError.incorrectParameterSize, "tcId \(test.tcId)") { try AES.GCM.Nonce(data: test.iv.bytes) }
                    refusedIV += 1
                    continue
                }
                let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: test.iv.bytes), ciphertext: test.ct.bytes, tag: test.tag.bytes)
                if test.result == "valid" {
                    try Self.check(key: test.key.bytes, iv: test.iv.bytes, aad: test.aad.bytes, plaintext: test.msg.bytes,
                                   ciphertext: test.ct.bytes, tag: test.tag.bytes, "tcId \(test.tcId)")
                    valid += 1
                } else {
                    #expect(throws: CryptoKitError.authenticationFailure, "tcId \(test.tcId)") {
                        try AES.GCM.open(box, using: key, authenticating: test.aad.bytes)
                    }
                    invalid += 1
                }
            }
        }
        // 116 valid and 81 invalid cases use 96-bit IVs; the other 119 use IV sizes this API refuses.
        #expect(valid == 116)
        #expect(invalid == 81)
        #expect(refusedIV == 119)
    }

    @Test("1,000 random cases against OpenSSL")
    func differential() throws {
        let file = try Fixtures.json(DifferentialFile.self, "openssl/aes256_gcm.json")
        #expect(file.cases.count == 1000)
        for (index, vector) in file.cases.enumerated() {
            try Self.check(key: vector.key.bytes, iv: vector.iv.bytes, aad: vector.aad.bytes, plaintext: vector.plaintext.bytes,
                           ciphertext: vector.ciphertext.bytes, tag: vector.tag.bytes, "case \(index)")
        }
    }

    @Test("Any change to tag, ciphertext, AAD, nonce or key is an authentication failure with no plaintext")
    func tampering() throws {
        let key = SymmetricKey(data: (0..<32).map { UInt8($0) })
        let message = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let aad = Array("header".utf8)
        let box = try AES.GCM.seal(message, using: key, authenticating: aad)
        let combined = box.combined!
        #expect(try AES.GCM.open(box, using: key, authenticating: aad) == message)

        // Every single-bit flip of nonce, ciphertext and tag is caught.
        for byteIndex in 0..<combined.count {
            for bit in [0, 3, 7] {
                var damaged = combined
                damaged[byteIndex] ^= UInt8(1 << bit)
                #expect(throws: CryptoKitError.authenticationFailure) {
                    try AES.GCM.open(try AES.GCM.SealedBox(combined: damaged), using: key, authenticating: aad)
                }
            }
        }
        #expect(throws: CryptoKitError.authenticationFailure) { try AES.GCM.open(box, using: key, authenticating: Array("headeR".utf8)) }
        #expect(throws: CryptoKitError.authenticationFailure) { try AES.GCM.open(box, using: key) }
        #expect(throws: CryptoKitError.authenticationFailure) { try AES.GCM.open(box, using: SymmetricKey(size: .bits256), authenticating: aad) }
        // Truncated or extended ciphertexts fail too.
        #expect(throws: CryptoKitError.authenticationFailure) {
            try AES.GCM.open(AES.GCM.SealedBox(nonce: box.nonce, ciphertext: box.ciphertext.dropLast(), tag: box.tag), using: key, authenticating: aad)
        }
        #expect(throws: CryptoKitError.authenticationFailure) {
            try AES.GCM.open(AES.GCM.SealedBox(nonce: box.nonce, ciphertext: box.ciphertext + [0], tag: box.tag), using: key, authenticating: aad)
        }
    }

    @Test("Wrong sizes are typed errors, never a crash")
    func sizes() throws {
        for size in [0, 12, 13, 27] {
            #expect(throws: CryptoKitError.incorrectParameterSize) { try AES.GCM.SealedBox(combined: [UInt8](repeating: 0, count: size)) }
        }
        #expect(throws: Never.self) { try AES.GCM.SealedBox(combined: [UInt8](repeating: 0, count: 28)) }
        for size in [0, 8, 11, 13, 16] {
            #expect(throws: CryptoKitError.incorrectParameterSize) { try AES.GCM.Nonce(data: [UInt8](repeating: 0, count: size)) }
        }
        #expect(throws: CryptoKitError.incorrectParameterSize) {
            try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(), ciphertext: [1, 2, 3], tag: [UInt8](repeating: 0, count: 15))
        }
        for size in [0, 8, 20, 31, 33] {
            #expect(throws: CryptoKitError.incorrectKeySize) { try AES.GCM.seal([1, 2, 3], using: SymmetricKey(data: [UInt8](repeating: 1, count: size))) }
        }
        let empty = try AES.GCM.SealedBox(combined: [UInt8](repeating: 0, count: 28))
        #expect(throws: CryptoKitError.incorrectKeySize) { try AES.GCM.open(empty, using: SymmetricKey(data: [UInt8](repeating: 1, count: 20))) }
        #expect(throws: CryptoKitError.authenticationFailure) { try AES.GCM.open(empty, using: SymmetricKey(size: .bits256)) }
    }

    @Test("Sealed boxes round-trip through their parts; random nonces differ")
    func sealedBoxParts() throws {
        let key = SymmetricKey(size: .bits256)
        let message = Array("attack at dawn".utf8)
        let box = try AES.GCM.seal(message, using: key)
        #expect(box.ciphertext.count == message.count)
        #expect(box.tag.count == 16)
        #expect(Array(box.nonce).count == 12)
        let rebuilt = try AES.GCM.SealedBox(nonce: box.nonce, ciphertext: box.ciphertext, tag: box.tag)
        #expect(rebuilt == box)
        #expect(try AES.GCM.open(rebuilt, using: key) == message)
        let other = try AES.GCM.seal(message, using: key)
        #expect(other.nonce != box.nonce)
        #expect(other.ciphertext != box.ciphertext)
        // Empty message and empty AAD.
        let empty = try AES.GCM.seal([UInt8](), using: key)
        #expect(try AES.GCM.open(empty, using: key) == [])
    }

    @Test("Non-contiguous and Foundation inputs seal like arrays")
    func inputKinds() throws {
        let key = SymmetricKey(data: [UInt8](repeating: 9, count: 32))
        let nonce = try AES.GCM.Nonce(data: [UInt8](repeating: 3, count: 12))
        let message = (0..<1000).map { UInt8(truncatingIfNeeded: $0) }
        let aad = (0..<40).map { UInt8(truncatingIfNeeded: $0 * 3) }
        let expected = try AES.GCM.seal(message, using: key, nonce: nonce, authenticating: aad)
        #expect(try AES.GCM.seal(NonContiguousBytes(bytes: message), using: key, nonce: nonce, authenticating: NonContiguousBytes(bytes: aad)) == expected)
        #expect(try AES.GCM.seal(Data(message), using: key, nonce: nonce, authenticating: Data(aad)) == expected)
        #expect(try AES.GCM.seal(message[...], using: key, nonce: nonce, authenticating: aad[...]) == expected)
    }
}
