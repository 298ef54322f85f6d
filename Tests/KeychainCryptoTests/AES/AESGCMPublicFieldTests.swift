import Testing
@_spi(KeychainFileInternals) @testable import KeychainCrypto

/// ``AES/GCM/PreparedKey/sharingAssociatedData(prefix:template:publicFields:)``: a key that starts GHASH after the
/// whole associated data when it matches a template outside its public bytes seals, opens, verifies and
/// batch-checks exactly as the plain key, whether or not a message's data matches.
@Suite("AES-GCM keys with a template of associated data and public fields")
struct AESGCMPublicFieldTests {
    /// Seals `plaintext` under `key` and `plain` and expects the same box; then opens, verifies and batch-checks
    /// the box with `key`, and expects a wrong tag to fail each way (``AESGCMPrefixTests/expectOpens(_:aad:key:plaintext:_:)``).
    static func expectSameBoxes(
        _ plaintext: [UInt8], aad: [UInt8], key: AES.GCM.PreparedKey, plain: AES.GCM.PreparedKey, nonce: [UInt8], _ comment: Comment
    ) throws {
        func seal(_ key: AES.GCM.PreparedKey) throws -> [UInt8] {
            var box = [UInt8](repeating: 0, count: plaintext.count + 28)
            try plaintext.withUnsafeBytes { p in
                try aad.withUnsafeBytes { a in
                    try box.withUnsafeMutableBytes { try AES.GCM.seal(p, using: key, nonce: AES.GCM.Nonce(data: nonce), authenticating: a, into: $0) }
                }
            }
            return box
        }
        let box = try seal(plain)
        #expect(try seal(key) == box, comment)
        try AESGCMPrefixTests.expectOpens(box, aad: aad, key: key, plaintext: plaintext, comment)
    }

    @Test("Data matching the template in any varying bytes, and data that does not match, give the plain key's boxes")
    func templateKeyAgreesWithPlainKey() throws {
        var random = SeededGenerator(seed: 0x7075_626c_6963)
        // The keychain's layout (78 bytes, entry index and previous chain value), and others: lengths that are and
        // are not multiples of 8 and 16, varying bytes at the start, at the end and across block boundaries.
        let layouts: [(count: Int, varying: [Range<Int>])] = [
            (78, [41..<45, 62..<78]), (16, [15..<16]), (20, [0..<1, 19..<20]), (33, [0..<3, 14..<18, 32..<33]), (64, [40..<64]),
            (100, [1..<2, 50..<70]),
        ]
        for layout in layouts {
            let symmetric = SymmetricKey(size: .bits256, using: &random)
            let plain = try AES.GCM.PreparedKey(symmetric)
            let fields = try AES.GCM.PublicFieldTables(key: plain, associatedDataByteCount: layout.count, varying: layout.varying)
            let template = (0..<layout.count).map { _ in UInt8.random(in: 0...255, using: &random) }
            // A prefix of at least one block (the API's requirement), half the data where that is more.
            let prefixCount = max(16, layout.count / 2)
            let key = template.withUnsafeBytes {
                plain.sharingAssociatedData(prefix: UnsafeRawBufferPointer(rebasing: $0[..<prefixCount]), template: $0, publicFields: fields)
            }
            let varying = Set(layout.varying.flatMap { Array($0) })
            for trial in 0..<60 {
                var aad = template
                // Random values in the varying bytes (all ones and zeros now and then).
                for index in varying { aad[index] = trial % 7 == 0 ? 0xff : trial % 11 == 0 ? 0 : UInt8.random(in: 0...255, using: &random) }
                // Every fourth trial changes a fixed byte too, or the length: the data no longer matches.
                if trial % 4 == 1, let fixed = (0..<layout.count).filter({ !varying.contains($0) }).randomElement(using: &random) {
                    aad[fixed] ^= 0x01
                }
                if trial % 4 == 3 { aad.append(0) }
                let plaintext = (0..<(trial * 7 % 90)).map { _ in UInt8.random(in: 0...255, using: &random) }
                let nonce = (0..<12).map { _ in UInt8.random(in: 0...255, using: &random) }
                try Self.expectSameBoxes(plaintext, aad: aad, key: key, plain: plain, nonce: nonce, "\(layout.count) bytes, trial \(trial)")
            }
        }
    }

    @Test("Tables for another key are ignored; bad layouts are typed errors")
    func otherKeysAndBadLayouts() throws {
        let first = try AES.GCM.PreparedKey(SymmetricKey(size: .bits256))
        #expect(throws: CryptoKitError.invalidParameter) { try AES.GCM.PublicFieldTables(key: first, associatedDataByteCount: 7, varying: []) }
        #expect(throws: CryptoKitError.invalidParameter) {
            try AES.GCM.PublicFieldTables(key: first, associatedDataByteCount: 20, varying: [18..<21])
        }
        #expect(throws: CryptoKitError.invalidParameter) {
            try AES.GCM.PublicFieldTables(key: first, associatedDataByteCount: 20, varying: [2..<6, 5..<8])
        }
        // A prefix key of one key used to seal under another: the state (computed under the first key) is ignored.
        let second = try AES.GCM.PreparedKey(SymmetricKey(size: .bits256))
        let fields = try AES.GCM.PublicFieldTables(key: first, associatedDataByteCount: 32, varying: [4..<8])
        let template = [UInt8](repeating: 3, count: 32)
        let key = template.withUnsafeBytes { first.sharingAssociatedData(prefix: $0, template: $0, publicFields: fields) }
        let context = key.context
        template.withUnsafeBytes { aad in
            #expect(key.prefix?.start(for: aad, under: second.context).absorbed == 0)
            #expect(key.prefix?.start(for: aad, under: context).absorbed == 32)
        }
    }
}
