import Testing
@testable import KeychainFile
@_spi(KeychainFileInternals) import KeychainCrypto

/// The header's chain start entries (Docs/FormatVersion3.md §2.6, §2.9): the count at byte 109, the 9-byte entries
/// after the sealed key table, and the checks a reader makes of them before any key is known.
@Suite("Format v3: the header's chain start entries")
struct ChainStartV3Tests {
    static let epoch: UInt64 = 0x0102_0305

    /// A header of epoch 0x0102_0305 with `starts`, encoded under its own log key, and where the entries begin.
    static func header(_ starts: [ChainStartV3]) throws -> (bytes: [UInt8], entries: Int) {
        var generator = SystemRandomNumberGenerator()
        let new = try NewHeaderV3(credential: HeaderV3Tests.password, kdf: HeaderV3Tests.cheap, using: &generator)
        let base = new.header
        let header = FileHeaderV3(
            fileID: base.fileID, epoch: Self.epoch, epochSalt: base.epochSalt, rewriteEnd: 0, rewriteHeadSequence: 0,
            rewriteHeadChain: base.rewriteHeadChain, tombstoneHorizonDays: base.tombstoneHorizonDays, sealedKeyTable: base.sealedKeyTable,
            slots: base.slots, chainStarts: starts)
        return (try header.encode(headerKey: try header.logKeys(logKey: new.logKey).header), FileHeaderV3.fixedLength + base.sealedKeyTable.count)
    }

    /// `bytes` with its checksum made right again, as anyone can.
    static func checksummed(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        let checksum = Array(SHA256.hash(data: bytes[0..<(bytes.count - 16)]).prefix(16))
        bytes.replaceSubrange((bytes.count - 16)..., with: checksum)
        return bytes
    }

    @Test("Entries round-trip: the count at byte 109, key id and big-endian start epoch after the key table, slots after them")
    func roundTrip() throws {
        let starts = [ChainStartV3(keyID: 1, startEpoch: 2), ChainStartV3(keyID: 7, startEpoch: 0x0102_0304)]
        let (bytes, at) = try Self.header(starts)
        #expect(bytes[109] == 2)
        #expect(Array(bytes[at..<(at + 18)]) == [1, 0, 0, 0, 0, 0, 0, 0, 2, 7, 0, 0, 0, 0, 1, 2, 3, 4])
        let parsed = try FileHeaderV3.parse(bytes)
        #expect(parsed.chainStarts == starts)
        #expect(parsed.startEpoch(of: 7) == 0x0102_0304 && parsed.startEpoch(of: 3) == Self.epoch)
        #expect(parsed.slotOffset(0) == at + 18)
        #expect(try FileHeaderV3.parse(try Self.header([]).bytes).chainStarts.isEmpty)
    }

    @Test("Entries of key id 0, out of order, repeated, or not before the header's epoch are corrupted, at the entry", arguments: [0, 1, 2, 3])
    func malformedEntries(kind: Int) throws {
        let (good, at) = try Self.header([ChainStartV3(keyID: 2, startEpoch: 3), ChainStartV3(keyID: 4, startEpoch: 4)])
        var bytes = good
        switch kind {
        case 0: bytes[at] = 0                                        // key id 0
        case 1: bytes[at + 9] = 1                                    // 4 → 1, after 2
        case 2: bytes[at + 9] = 2                                    // 2 twice
        default: bytes.replaceSubrange((at + 10)..<(at + 18), with: [0, 0, 0, 0, 1, 2, 3, 5])   // the header's own epoch
        }
        let error = #expect(throws: KeychainError.self) { _ = try FileHeaderV3.parse(Self.checksummed(bytes)) }
        guard case .corrupted(let offset, _)? = error else {
            Issue.record("kind \(kind): \(String(describing: error))")
            return
        }
        #expect(offset == (kind == 0 ? at : at + 9), "kind \(kind)")
    }

    @Test("A count that claims more entries than the header holds is corrupted, never read into the slots")
    func countPastTheSlots() throws {
        var bytes = try Self.header([ChainStartV3(keyID: 2, startEpoch: 3)]).bytes
        bytes[109] = 200
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { _ = try FileHeaderV3.parse(Self.checksummed(bytes)) }
    }

    @Test("A writer refuses entries it must not write: out of order, key id 0, not before the epoch")
    func writerRefuses() throws {
        for starts in [[ChainStartV3(keyID: 3, startEpoch: 1), ChainStartV3(keyID: 2, startEpoch: 1)], [ChainStartV3(keyID: 0, startEpoch: 1)],
                       [ChainStartV3(keyID: 2, startEpoch: Self.epoch)]] {
            #expect(throws: KeychainError.invalidParameter("")) { _ = try Self.header(starts) }
        }
    }
}
