import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// The version 2 header's reader refuses what no writer writes: a rewrite head that does not fit the rewrite
/// end, a tombstone horizon out of bounds.
@Suite("Format v2: header reader checks")
struct HeaderV2ReaderChecksTests {
    static func encoded(rewriteEnd: UInt64, sequence: UInt64, chain: [UInt8]? = nil, horizon: UInt32 = 90) throws -> (bytes: [UInt8], header: FileHeaderV2) {
        let (_, base, key) = try HeaderV2DamageTests.make()
        let keys = try base.epochKeys(masterKey: key)
        let header = FileHeaderV2(
            fileID: base.fileID, epoch: base.epoch, epochSalt: base.epochSalt, rewriteEnd: rewriteEnd, rewriteHeadSequence: sequence,
            rewriteHeadChain: chain ?? base.initialChainValue(headerKey: keys.header), tombstoneHorizonDays: horizon, slots: base.slots)
        return (header.encode(headerKey: keys.header), header)
    }

    @Test("Rewrite end 0 exactly when the head sequence is 0; a tombstone horizon of 1 … 36,525 days")
    func headAndHorizonChecked() throws {
        for (end, sequence, horizon, accepted) in [
            (UInt64(0), UInt64(0), UInt32(90), true), (4_096, 7, 90, true), (0, 5, 90, false), (4_096, 0, 90, false),
            (0, 0, 1, true), (0, 0, 36_525, true), (0, 0, 0, false), (0, 0, 36_526, false), (0, 0, .max, false),
        ] {
            let bytes = try Self.encoded(rewriteEnd: end, sequence: sequence, horizon: horizon).bytes
            if accepted {
                _ = try FileHeaderV2.parse(bytes)
            } else {
                #expect(throws: KeychainError.corrupted(offset: 0, reason: ""), "end \(end), sequence \(sequence), horizon \(horizon)") { try FileHeaderV2.parse(bytes) }
            }
        }
    }

    @Test("A header that verifies but has rewrite end 0 and a head chain other than C0 is corrupted")
    func headChainIsC0WithoutRecords() throws {
        let wrong = try Self.encoded(rewriteEnd: 0, sequence: 0, chain: [UInt8](repeating: 0, count: 16)).bytes
        _ = try FileHeaderV2.parse(wrong)   // its structure and checksum are fine
        let page = HeaderPage.encode(wrong)
        let reason = HeaderV2DamageTests.corruptedReason { () throws(KeychainError) in _ = try OpenedHeaderV2(pageA: page, pageB: page, credential: HeaderV2DamageTests.password) }
        #expect(reason?.contains("C0") == true, "\(reason ?? "opened")")
        let right = HeaderPage.encode(try Self.encoded(rewriteEnd: 0, sequence: 0).bytes)
        _ = try OpenedHeaderV2(pageA: right, pageB: right, credential: HeaderV2DamageTests.password)
    }
}
