import Testing
@_spi(KeychainFileInternals) @testable import KeychainCrypto

/// A box sealed with 16 bytes of its associated data at zero and then completed with ``AES.GCM/DeferredSlot``
/// is byte for byte the box sealed with those bytes in place: checked against published and OpenSSL vectors
/// (their ciphertext and tag are the expected result), at every position of the slot within a block.
@Suite("AES-GCM deferred associated-data slot")
struct AESGCMDeferredSlotTests {
    /// Seals `plaintext` with `aad`'s bytes `offset ..< offset + 16` zeroed, completes the tag with the real
    /// bytes, and returns the box.
    static func sealDeferred(
        key: SymmetricKey, iv: [UInt8], aad: [UInt8], plaintext: [UInt8], slotOffset offset: Int, slotter: AES.GCM.DeferredSlot
    ) throws -> [UInt8] {
        var zeroed = aad
        zeroed.replaceSubrange(offset..<(offset + 16), with: [UInt8](repeating: 0, count: 16))
        var box = [UInt8](repeating: 0, count: plaintext.count + 28)
        let nonce = try AES.GCM.Nonce(data: iv)
        try plaintext.withUnsafeBytes { p in
            try zeroed.withUnsafeBytes { a in
                try box.withUnsafeMutableBytes { try AES.GCM.seal(p, using: key, nonce: nonce, authenticating: a, into: $0) }
            }
        }
        let slot = Array(aad[offset..<(offset + 16)])
        try box.withUnsafeMutableBytes { b in try slot.withUnsafeBytes { try slotter.complete(tagOf: b, slot: $0) } }
        return box
    }

    /// The slot offsets tried for associated data of `count` bytes: the first 17 (every position within a
    /// block, when there is room) and the last.
    static func slotOffsets(forAssociatedDataOf count: Int) -> [Int] {
        guard count >= 16 else { return [] }
        return Array(Set((0...16).map { min($0, count - 16) } + [count - 16])).sorted()
    }

    @Test("OpenSSL vectors: every case with 16 or more bytes of associated data, the slot at 17+ offsets")
    func openSSLVectors() throws {
        let file = try Fixtures.json(AESGCMTests.DifferentialFile.self, "openssl/aes256_gcm.json")
        var checked = 0, shifts = Set<Int>()
        for (index, vector) in file.cases.enumerated() {
            let aad = vector.aad.bytes
            let key = SymmetricKey(data: vector.key.bytes)
            for offset in Self.slotOffsets(forAssociatedDataOf: aad.count) {
                let slotter = try AES.GCM.DeferredSlot(key: key, slotOffset: offset, authenticatedByteCount: aad.count)
                let box = try Self.sealDeferred(
                    key: key, iv: vector.iv.bytes, aad: aad, plaintext: vector.plaintext.bytes, slotOffset: offset, slotter: slotter)
                #expect(box == vector.iv.bytes + vector.ciphertext.bytes + vector.tag.bytes, "case \(index), slot at \(offset)")
                checked += 1
                shifts.insert(offset % 16)
            }
        }
        // 598 of the 1,000 cases have at least 16 bytes of associated data.
        #expect(checked >= 598 * 2)
        #expect(shifts.count == 16)
    }

    @Test("Wycheproof aes_gcm_test.json: every valid 96-bit-IV case with 16 or more bytes of associated data")
    func wycheproofVectors() throws {
        let file = try Fixtures.json(AESGCMTests.WycheproofFile.self, "wycheproof/aes_gcm_test.json")
        var cases = 0
        for group in file.testGroups where group.ivSize == 96 {
            for test in group.tests where test.result == "valid" && test.aad.bytes.count >= 16 {
                let key = SymmetricKey(data: test.key.bytes)
                for offset in Self.slotOffsets(forAssociatedDataOf: test.aad.bytes.count) {
                    let slotter = try AES.GCM.DeferredSlot(key: key, slotOffset: offset, authenticatedByteCount: test.aad.bytes.count)
                    let box = try Self.sealDeferred(
                        key: key, iv: test.iv.bytes, aad: test.aad.bytes, plaintext: test.msg.bytes, slotOffset: offset, slotter: slotter)
                    #expect(box == test.iv.bytes + test.ct.bytes + test.tag.bytes, "tcId \(test.tcId), slot at \(offset)")
                }
                cases += 1
            }
        }
        #expect(cases == 43)
    }

    @Test("One instance completes boxes of many lengths, beyond the powers it caches, and opens them")
    func manyLengths() throws {
        let key = SymmetricKey(size: .bits256)
        // The keychain's shape: 78 bytes of associated data with the previous chain value at offset 62.
        let aad = (0..<78).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) }
        let slotter = try AES.GCM.DeferredSlot(key: key, slotOffset: 62, authenticatedByteCount: aad.count)
        let lengths = Array(0...(AES.GCM.DeferredSlot.cachedPowerLimit * 16 + 40)) + [4_095, 4_096, 65_537]
        for length in lengths {
            let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &+ length) }
            let iv = (0..<12).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ length) }
            let box = try Self.sealDeferred(key: key, iv: iv, aad: aad, plaintext: plaintext, slotOffset: 62, slotter: slotter)
            let opened = try AES.GCM.open(AES.GCM.SealedBox(combined: box), using: key, authenticating: aad)
            #expect(opened == plaintext, "length \(length)")
        }
    }

    @Test("A slot outside the associated data, or of the wrong size, is a typed error")
    func badParameters() throws {
        let key = SymmetricKey(size: .bits256)
        #expect(throws: CryptoKitError.invalidParameter) { try AES.GCM.DeferredSlot(key: key, slotOffset: 63, authenticatedByteCount: 78) }
        #expect(throws: CryptoKitError.invalidParameter) { try AES.GCM.DeferredSlot(key: key, slotOffset: 0, authenticatedByteCount: 15) }
        #expect(throws: CryptoKitError.invalidParameter) { try AES.GCM.DeferredSlot(key: key, slotOffset: -1, authenticatedByteCount: 78) }
        #expect(throws: CryptoKitError.incorrectKeySize) {
            try AES.GCM.DeferredSlot(key: SymmetricKey(data: [UInt8](repeating: 1, count: 20)), slotOffset: 0, authenticatedByteCount: 16)
        }
        let slotter = try AES.GCM.DeferredSlot(key: key, slotOffset: 62, authenticatedByteCount: 78)
        var box = [UInt8](repeating: 0, count: 40)
        #expect(throws: CryptoKitError.incorrectParameterSize) {
            try box.withUnsafeMutableBytes { b in try [UInt8](repeating: 0, count: 15).withUnsafeBytes { try slotter.complete(tagOf: b, slot: $0) } }
        }
        var short = [UInt8](repeating: 0, count: 27)
        #expect(throws: CryptoKitError.incorrectParameterSize) {
            try short.withUnsafeMutableBytes { b in try [UInt8](repeating: 0, count: 16).withUnsafeBytes { try slotter.complete(tagOf: b, slot: $0) } }
        }
    }
}
