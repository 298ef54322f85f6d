import Testing
@_spi(KeychainFileInternals) @testable import KeychainCrypto

@Suite("AES-GCM buffer SPI")
struct AESGCMBufferTests {
    struct DifferentialFile: Decodable {
        struct Case: Decodable { let key: Hex; let iv: Hex; let aad: Hex; let plaintext: Hex; let ciphertext: Hex; let tag: Hex }
        let cases: [Case]
    }

    @Test("Seal, open and verify into buffers match the OpenSSL vectors")
    func matchesVectors() throws {
        let file = try Fixtures.json(DifferentialFile.self, "openssl/aes256_gcm.json")
        for vector in file.cases.prefix(300) {
            let key = SymmetricKey(data: vector.key.bytes)
            let nonce = try AES.GCM.Nonce(data: vector.iv.bytes)
            let plaintext = vector.plaintext.bytes, aad = vector.aad.bytes
            var box = [UInt8](repeating: 0, count: plaintext.count + 28)
            try plaintext.withUnsafeBytes { p in
                try aad.withUnsafeBytes { a in
                    try box.withUnsafeMutableBytes { try AES.GCM.seal(p, using: key, nonce: nonce, authenticating: a, into: $0) }
                }
            }
            #expect(box == vector.iv.bytes + vector.ciphertext.bytes + vector.tag.bytes)
            var opened = [UInt8](repeating: 0, count: plaintext.count)
            try box.withUnsafeBytes { b in
                try aad.withUnsafeBytes { a in
                    try AES.GCM.verify(b, using: key, authenticating: a)
                    try opened.withUnsafeMutableBytes { try AES.GCM.open(b, using: key, authenticating: a, into: $0) }
                }
            }
            #expect(opened == plaintext)
        }
    }

    @Test("A flipped bit fails open and verify, and open writes nothing")
    func tampering() throws {
        let key = SymmetricKey(size: .bits256)
        let box = try AES.GCM.seal([UInt8](repeating: 7, count: 40), using: key, authenticating: [1, 2, 3]).combined!
        for index in box.indices {
            var damaged = box
            damaged[index] ^= 0x10
            var output = [UInt8](repeating: 0xee, count: 40)
            #expect(throws: CryptoKitError.authenticationFailure) {
                try damaged.withUnsafeBytes { b in try [UInt8]([1, 2, 3]).withUnsafeBytes { a in try AES.GCM.verify(b, using: key, authenticating: a) } }
            }
            #expect(throws: CryptoKitError.authenticationFailure) {
                try damaged.withUnsafeBytes { b in
                    try [UInt8]([1, 2, 3]).withUnsafeBytes { a in
                        try output.withUnsafeMutableBytes { try AES.GCM.open(b, using: key, authenticating: a, into: $0) }
                    }
                }
            }
            #expect(output == [UInt8](repeating: 0xee, count: 40))
        }
    }

    @Test("Wrong buffer sizes are typed errors")
    func sizes() throws {
        let key = SymmetricKey(size: .bits256)
        var small = [UInt8](repeating: 0, count: 27)
        #expect(throws: CryptoKitError.incorrectParameterSize) {
            try small.withUnsafeBytes { b in try AES.GCM.verify(b, using: key, authenticating: UnsafeRawBufferPointer(start: nil, count: 0)) }
        }
        #expect(throws: CryptoKitError.incorrectParameterSize) {
            try [UInt8](repeating: 1, count: 10).withUnsafeBytes { p in
                try small.withUnsafeMutableBytes { try AES.GCM.seal(p, using: key, nonce: AES.GCM.Nonce(), authenticating: UnsafeRawBufferPointer(start: nil, count: 0), into: $0) }
            }
        }
        // An empty plaintext seals into exactly 28 bytes and opens into an empty buffer.
        var box = [UInt8](repeating: 0, count: 28)
        try box.withUnsafeMutableBytes { try AES.GCM.seal(UnsafeRawBufferPointer(start: nil, count: 0), using: key, nonce: AES.GCM.Nonce(), authenticating: UnsafeRawBufferPointer(start: nil, count: 0), into: $0) }
        var empty = [UInt8]()
        try box.withUnsafeBytes { b in try empty.withUnsafeMutableBytes { try AES.GCM.open(b, using: key, authenticating: UnsafeRawBufferPointer(start: nil, count: 0), into: $0) } }
        small = []
        #expect(empty.isEmpty)
    }
}
