import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// What a newer writer may add to version 2 records — record kinds, key ids (issue 31's group keys), box roles,
/// page encodings — is `unsupportedFeature`, never `corrupted` (which would send the healing layer to repair
/// intact bytes); the same bytes damaged, not rewritten with their check, stay `corrupted`.
@Suite("Format v2: a newer writer's records are unsupported, not corrupted")
struct RecordV2UnsupportedTests {
    /// A record of a put (a secret box and a page) and a deletion, and its frame.
    static func record() throws -> (bytes: [UInt8], scanned: RecordV2Decoder.Scanned) {
        var random = SplitMix64(seed: 41)
        let entries = [try RecordV2Tests.put(1, secretLength: 20, using: &random), .delete(id: ItemID(using: &random), time: 5)]
        let record = try RecordV2Encoder.encode(entries, kind: .commit, sequence: 1, part: 0, previousChain: RecordV2Tests.c0, keys: try RecordV2Tests.keys(), using: &random)
        return (record.bytes, try RecordV2Decoder.scan(record.bytes, at: 0))
    }

    /// The error decoding `bytes` throws, or nil.
    static func error(decoding bytes: [UInt8]) throws -> KeychainError? {
        let keys = try RecordV2Tests.keys()
        do throws(KeychainError) {
            _ = try RecordV2Decoder.decode(bytes, at: 0, previousChain: RecordV2Tests.c0, keys: keys)
            return nil
        } catch {
            return error
        }
    }

    @Test("A record kind, a key id or a box role this version does not know, in a frame whose check passes: unsupportedFeature at that byte")
    func unknownFrameValues() throws {
        let (bytes, scanned) = try Self.record()
        let secretField = scanned.pages[0].secrets[0].lowerBound - RecordV2.boxFieldHeaderSize
        let pageField = scanned.pages[0].box.lowerBound - RecordV2.boxFieldHeaderSize
        let cases: [(name: String, offset: Int, value: UInt8)] = [
            ("record kind 2", 8, 2), ("record kind 0xFF", 8, 0xFF),
            ("secret box under key id 1", secretField, 1), ("page under key id 7", pageField, 7),
            ("secret box of role 3", secretField + 1, 3), ("page of role 0", pageField + 1, 0),
        ]
        for (name, offset, value) in cases {
            var newer = bytes
            newer[offset] = value
            RecordV2Forgery.refreshFrameCheck(&newer)
            guard case .unsupportedFeature(let at, _) = try Self.error(decoding: newer) else {
                Issue.record("\(name): \(String(describing: try Self.error(decoding: newer)))")
                continue
            }
            #expect(at == offset, "\(name)")
            // The same byte damaged, the check not recomputed: corrupted, at the record.
            var damaged = bytes
            damaged[offset] = value
            guard case .corrupted(let damageAt, _) = try Self.error(decoding: damaged) else {
                Issue.record("\(name), damaged: \(String(describing: try Self.error(decoding: damaged)))")
                continue
            }
            #expect(damageAt == 0, "\(name), damaged")
        }
    }

    @Test("A page that authenticates but is in page encoding version 2: unsupportedFeature at that page")
    func unknownPageVersion() throws {
        let (bytes, scanned) = try Self.record()
        var newer = bytes
        try RecordV2Forgery.resealPage(&newer, page: 0, previousChain: RecordV2Tests.c0, keys: try RecordV2Tests.keys()) { $0[0] = 2 }
        guard case .unsupportedFeature(let at, let reason) = try Self.error(decoding: newer) else {
            Issue.record("\(String(describing: try Self.error(decoding: newer)))")
            return
        }
        #expect(at == scanned.pages[0].box.lowerBound && reason.contains("version 2"), "\(reason)")
        // The version byte resealed as 1 again decodes: the forgery itself is sound.
        var same = bytes
        try RecordV2Forgery.resealPage(&same, page: 0, previousChain: RecordV2Tests.c0, keys: try RecordV2Tests.keys()) { $0[0] = 1 }
        #expect(try Self.error(decoding: same) == nil)
    }
}
