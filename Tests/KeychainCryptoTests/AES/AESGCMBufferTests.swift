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

    /// Runs ``AES/GCM/decryptVerified(_:using:into:)`` on `box` and returns the plaintext.
    static func decryptVerified(_ box: [UInt8], key: SymmetricKey, outputCount: Int? = nil) throws -> [UInt8] {
        var output = [UInt8](repeating: 0xee, count: outputCount ?? max(0, box.count - 28))
        let prepared = try AES.GCM.PreparedKey(key)
        try box.withUnsafeBytes { b in try output.withUnsafeMutableBytes { try AES.GCM.decryptVerified(b, using: prepared, into: $0) } }
        return output
    }

    @Test("Decrypting a verified box gives the published plaintexts: the OpenSSL vectors and Wycheproof's valid 96-bit-IV cases")
    func decryptVerifiedMatchesVectors() throws {
        let openSSL = try Fixtures.json(DifferentialFile.self, "openssl/aes256_gcm.json")
        for (index, vector) in openSSL.cases.enumerated() {
            let box = vector.iv.bytes + vector.ciphertext.bytes + vector.tag.bytes
            #expect(try Self.decryptVerified(box, key: SymmetricKey(data: vector.key.bytes)) == vector.plaintext.bytes, "vector \(index)")
        }
        let wycheproof = try Fixtures.json(AESGCMTests.WycheproofFile.self, "wycheproof/aes_gcm_test.json")
        var checked = 0
        for group in wycheproof.testGroups where group.ivSize == 96 {
            for test in group.tests where test.result == "valid" {
                let box = test.iv.bytes + test.ct.bytes + test.tag.bytes
                #expect(try Self.decryptVerified(box, key: SymmetricKey(data: test.key.bytes)) == test.msg.bytes, "tcId \(test.tcId)")
                checked += 1
            }
        }
        #expect(checked > 100)
    }

    @Test("Decrypting a verified box checks no tag: what was altered comes out altered, and only sizes are errors")
    func decryptVerifiedChecksNothing() throws {
        let key = SymmetricKey(size: .bits256)
        let plaintext = (0..<40).map { UInt8($0) }
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: [1, 2, 3]).combined!
        #expect(try Self.decryptVerified(box, key: key) == plaintext)
        // A tag or associated data that would fail `open` changes nothing here; a flipped ciphertext bit flips the
        // same plaintext bit (CTR), which is why only verified boxes may be decrypted this way.
        var badTag = box
        badTag[box.count - 1] ^= 1
        #expect(try Self.decryptVerified(badTag, key: key) == plaintext)
        var badText = box
        badText[12 + 5] ^= 0x40
        var expected = plaintext
        expected[5] ^= 0x40
        #expect(try Self.decryptVerified(badText, key: key) == expected)
        #expect(throws: CryptoKitError.incorrectParameterSize) { try Self.decryptVerified(Array(box.prefix(27)), key: key, outputCount: 0) }
        #expect(throws: CryptoKitError.incorrectParameterSize) { try Self.decryptVerified(box, key: key, outputCount: 39) }
        let empty = try AES.GCM.seal([UInt8](), using: key, authenticating: []).combined!
        #expect(try Self.decryptVerified(empty, key: key).isEmpty)
    }

    /// Runs ``AES/GCM/firstFailingTag(count:using:box:authenticating:)`` on `boxes` (all under `key`) and returns
    /// its answer; the boxes and associated data are packed so that their memory outlives the call.
    static func firstFailingTag(_ boxes: [(box: [UInt8], aad: [UInt8])], key: SymmetricKey) throws -> Int? {
        let prepared = try AES.GCM.PreparedKey(key)
        let packedBoxes = boxes.flatMap(\.box), packedAADs = boxes.flatMap(\.aad)
        var boxStarts = [0], aadStarts = [0]
        for pair in boxes {
            boxStarts.append(boxStarts.last! + pair.box.count)
            aadStarts.append(aadStarts.last! + pair.aad.count)
        }
        return packedBoxes.withUnsafeBytes { allBoxes in
            packedAADs.withUnsafeBytes { allAADs in
                AES.GCM.firstFailingTag(
                    count: boxes.count, using: prepared,
                    box: { UnsafeRawBufferPointer(rebasing: allBoxes[boxStarts[$0]..<boxStarts[$0 + 1]]) },
                    authenticating: { UnsafeRawBufferPointer(rebasing: allAADs[aadStarts[$0]..<aadStarts[$0 + 1]]) })
            }
        }
    }

    @Test("Tags checked eight at a time: the OpenSSL vectors verify, and the first altered box is the one named")
    func batchedTagsMatchVectors() throws {
        let file = try Fixtures.json(DifferentialFile.self, "openssl/aes256_gcm.json")
        // The vectors have keys of their own; a batch shares one key, so each batch is one vector's key with
        // that vector's box and associated data, plus boxes sealed under the key for the other lanes.
        var random = SystemRandomNumberGenerator()
        for (index, vector) in file.cases.prefix(200).enumerated() {
            let key = SymmetricKey(data: vector.key.bytes)
            let published = (box: vector.iv.bytes + vector.ciphertext.bytes + vector.tag.bytes, aad: vector.aad.bytes)
            let count = index % 8 + 1
            var boxes: [(box: [UInt8], aad: [UInt8])] = []
            for lane in 0..<count {
                if lane == index % count {
                    boxes.append(published)
                } else {
                    let other = file.cases[(index + lane * 37) % file.cases.count]
                    let sealed = try AES.GCM.seal(other.plaintext.bytes, using: key, authenticating: other.aad.bytes)
                    boxes.append((sealed.combined!, other.aad.bytes))
                }
            }
            #expect(try Self.firstFailingTag(boxes, key: key) == nil, "vector \(index), \(count) boxes")
            // Altering one byte of any box (nonce, ciphertext or tag) or of its associated data fails that box,
            // and with two altered boxes the earlier is named.
            let victim = Int.random(in: 0..<count, using: &random)
            var altered = boxes
            if Bool.random(using: &random) || altered[victim].aad.isEmpty {
                altered[victim].box[Int.random(in: 0..<altered[victim].box.count, using: &random)] ^= 0x20
            } else {
                altered[victim].aad[Int.random(in: 0..<altered[victim].aad.count, using: &random)] ^= 0x01
            }
            #expect(try Self.firstFailingTag(altered, key: key) == victim, "vector \(index), box \(victim) altered")
            if victim + 1 < count {
                altered[count - 1].box[0] ^= 0x80
                #expect(try Self.firstFailingTag(altered, key: key) == victim, "vector \(index), two altered")
            }
            // A box too short to hold a nonce and a tag fails where it stands.
            var short = boxes
            short[count - 1].box = Array(short[count - 1].box.prefix(27))
            #expect(try Self.firstFailingTag(short, key: key) == count - 1)
        }
    }

    @Test("Tags checked eight at a time: Wycheproof's 96-bit-IV cases verify or fail as published")
    func batchedTagsMatchWycheproof() throws {
        let file = try Fixtures.json(AESGCMTests.WycheproofFile.self, "wycheproof/aes_gcm_test.json")
        var checked = 0
        for group in file.testGroups where group.ivSize == 96 {
            for test in group.tests {
                let key = SymmetricKey(data: test.key.bytes)
                let box = test.iv.bytes + test.ct.bytes + test.tag.bytes
                // Alone, and last behind seven valid boxes under its key.
                var boxes: [(box: [UInt8], aad: [UInt8])] = []
                for filler in 0..<7 {
                    let sealed = try AES.GCM.seal([UInt8](repeating: UInt8(filler), count: filler * 5), using: key, authenticating: [])
                    boxes.append((sealed.combined!, []))
                }
                let expected: Int? = test.result == "valid" ? nil : 0
                #expect(try Self.firstFailingTag([(box, test.aad.bytes)], key: key) == expected, "tcId \(test.tcId)")
                #expect(try Self.firstFailingTag(boxes + [(box, test.aad.bytes)], key: key) == expected.map { _ in 7 },
                        "tcId \(test.tcId) after seven")
                checked += 1
            }
        }
        #expect(checked == 197)
    }
}
