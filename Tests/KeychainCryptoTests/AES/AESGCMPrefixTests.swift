import Testing
@_spi(KeychainFileInternals) @testable import KeychainCrypto

/// ``AES/GCM/PreparedKey/sharingAssociatedDataPrefix(_:)``: a key holding the GHASH state after a prefix of the
/// associated data seals, opens and verifies exactly as the plain key, whether or not a message's associated
/// data begins with the prefix.
@Suite("AES-GCM keys sharing an associated-data prefix")
struct AESGCMPrefixTests {
    typealias Vector = AESGCMBufferTests.DifferentialFile.Case

    /// Seals, verifies, opens and batch-checks `vector` with `key`, expecting the published box and plaintext.
    static func expectPublished(_ vector: Vector, key: AES.GCM.PreparedKey, _ comment: Comment) throws {
        let plaintext = vector.plaintext.bytes, aad = vector.aad.bytes
        let published = vector.iv.bytes + vector.ciphertext.bytes + vector.tag.bytes
        var box = [UInt8](repeating: 0, count: plaintext.count + 28)
        try plaintext.withUnsafeBytes { p in
            try aad.withUnsafeBytes { a in
                try box.withUnsafeMutableBytes {
                    try AES.GCM.seal(p, using: key, nonce: AES.GCM.Nonce(data: vector.iv.bytes), authenticating: a, into: $0)
                }
            }
        }
        #expect(box == published, comment)
        try expectOpens(published, aad: aad, key: key, plaintext: plaintext, comment)
    }

    /// Verifies, opens and batch-checks `box` with `key`, expecting `plaintext`; and expects the box with its tag's
    /// last bit flipped to fail verification and the batch check.
    static func expectOpens(_ box: [UInt8], aad: [UInt8], key: AES.GCM.PreparedKey, plaintext: [UInt8], _ comment: Comment) throws {
        var opened = [UInt8](repeating: 0, count: plaintext.count)
        var altered = box
        altered[box.count - 1] ^= 1
        try box.withUnsafeBytes { b in
            try aad.withUnsafeBytes { a in
                try AES.GCM.verify(b, using: key, authenticating: a)
                try opened.withUnsafeMutableBytes { try AES.GCM.open(b, using: key, authenticating: a, into: $0) }
                #expect(AES.GCM.firstFailingTag(count: 1, using: key, box: { _ in b }, authenticating: { _ in a }) == nil, comment)
                altered.withUnsafeBytes { wrong in
                    #expect(throws: CryptoKitError.authenticationFailure, comment) { try AES.GCM.verify(wrong, using: key, authenticating: a) }
                    #expect(AES.GCM.firstFailingTag(count: 1, using: key, box: { _ in wrong }, authenticating: { _ in a }) == 0, comment)
                }
            }
        }
        #expect(opened == plaintext, comment)
    }

    @Test("Every whole-block prefix of a vector's associated data gives the published boxes: the OpenSSL vectors")
    func prefixesOfTheVectorsOwnData() throws {
        let file = try Fixtures.json(AESGCMBufferTests.DifferentialFile.self, "openssl/aes256_gcm.json")
        var checked = 0
        for (index, vector) in file.cases.enumerated() where vector.aad.bytes.count >= 16 {
            let aad = vector.aad.bytes
            let plain = try AES.GCM.PreparedKey(SymmetricKey(data: vector.key.bytes))
            // One to all of the whole blocks, and the whole data with its partial block, which counts as its
            // whole blocks only.
            for length in Set(stride(from: 16, through: aad.count, by: 16)).union([aad.count]).sorted() {
                let key = aad.withUnsafeBytes { plain.sharingAssociatedDataPrefix(UnsafeRawBufferPointer(rebasing: $0[..<length])) }
                try Self.expectPublished(vector, key: key, "vector \(index), prefix of \(length) bytes")
            }
            checked += 1
        }
        #expect(checked > 500)
    }

    @Test("A message whose associated data does not begin with the prefix, or is shorter, is hashed from the start")
    func otherDataIgnoresThePrefix() throws {
        let file = try Fixtures.json(AESGCMBufferTests.DifferentialFile.self, "openssl/aes256_gcm.json")
        for (index, vector) in file.cases.prefix(300).enumerated() {
            let plain = try AES.GCM.PreparedKey(SymmetricKey(data: vector.key.bytes))
            var prefixes: [[UInt8]] = [[UInt8](repeating: 0, count: 16), [UInt8](repeating: 0xa5, count: 48)]
            var aad = vector.aad.bytes
            if aad.count >= 16 {
                // The vector's own first blocks with one bit changed, in the first block and in the last.
                let whole = aad.count / 16 * 16
                aad[0] ^= 0x01
                prefixes.append(Array(aad[..<whole]))
                aad[0] ^= 0x01
                aad[whole - 1] ^= 0x80
                prefixes.append(Array(aad[..<whole]))
                aad[whole - 1] ^= 0x80
                // Longer than the data: one block more than it has.
                prefixes.append(Array(aad[..<whole]) + [UInt8](repeating: 0, count: 16))
            }
            for prefix in prefixes {
                let key = prefix.withUnsafeBytes { plain.sharingAssociatedDataPrefix($0) }
                try Self.expectPublished(vector, key: key, "vector \(index), prefix \(prefix.prefix(4))… of \(prefix.count) bytes")
            }
        }
    }

    @Test("Boxes checked eight at a time with a prefix key: those whose data begins with it and those whose data does not")
    func batchedTagsWithAPrefix() throws {
        let key = SymmetricKey(size: .bits256)
        let plain = try AES.GCM.PreparedKey(key)
        let shared = (0..<32).map { UInt8($0 &* 7) }
        let prefixed = shared.withUnsafeBytes { plain.sharingAssociatedDataPrefix($0) }
        var boxes: [[UInt8]] = [], aads: [[UInt8]] = []
        for lane in 0..<8 {
            // Even lanes begin with the shared bytes; odd ones differ in their second block.
            var aad = shared + [UInt8](repeating: UInt8(lane), count: lane * 9)
            if lane % 2 == 1 { aad[20] ^= 0xff }
            aads.append(aad)
            boxes.append(try AES.GCM.seal([UInt8](repeating: UInt8(lane), count: lane * 11), using: key, authenticating: aad).combined!)
        }
        let packedBoxes = boxes.flatMap { $0 }, packedAADs = aads.flatMap { $0 }
        var boxStarts = [0], aadStarts = [0]
        for lane in 0..<8 {
            boxStarts.append(boxStarts.last! + boxes[lane].count)
            aadStarts.append(aadStarts.last! + aads[lane].count)
        }
        func check(_ packed: [UInt8]) -> Int? {
            packed.withUnsafeBytes { allBoxes in
                packedAADs.withUnsafeBytes { allAADs in
                    AES.GCM.firstFailingTag(
                        count: 8, using: prefixed,
                        box: { UnsafeRawBufferPointer(rebasing: allBoxes[boxStarts[$0]..<boxStarts[$0 + 1]]) },
                        authenticating: { UnsafeRawBufferPointer(rebasing: allAADs[aadStarts[$0]..<aadStarts[$0 + 1]]) })
                }
            }
        }
        #expect(check(packedBoxes) == nil)
        for lane in 0..<8 {
            var altered = packedBoxes
            altered[boxStarts[lane + 1] - 1] ^= 0x04
            #expect(check(altered) == lane, "lane \(lane)'s tag altered")
        }
    }
}
