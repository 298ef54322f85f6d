import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

/// Records set aside as possibly acknowledged (Docs/FormatVersion2.md §3 rule 2): kept, never cut, still
/// repairable after later appends, until they are dropped explicitly.
@Suite("Healing: records set aside")
struct HealingLogSetAsideTests {
    typealias Files = HealingLogTests
    static let key = HealingLogTests.key
    static let chain = HealingLogCuttingTests.chain

    /// Records of 4,000 and 12,000 bytes, the second damaged in 8 KiB (32 symbols of every codeword: beyond
    /// what parity repairs without knowing where). The damaged image, the records, and the damaged range.
    static func damagedLastRecord() throws -> (image: [UInt8], records: [[UInt8]], damaged: Range<Int>) {
        let records = Files.records([4_000, 12_000], seed: 51)
        var image = try Files.bytes(of: try Files.file(with: records).handle)
        let damaged = 6_144..<14_336   // physical offsets 38,912..<47,104: whole sectors
        for offset in damaged { image[HealingLayout.physical(offset)] ^= 0x5C }
        return (image, records, damaged)
    }

    static func physical(_ range: Range<Int>) -> Range<Int> { HealingLayout.physical(range.lowerBound)..<HealingLayout.physical(range.upperBound) }

    @Test("Records set aside are kept as they are through two more appends, and the parity carried past them still repairs them")
    func keptAndRepairable() throws {
        let (image, records, damaged) = try Self.damagedLastRecord()
        let handle = Files.handle(image)
        let log = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        #expect(log.appendRefusal == .tailMismatch)
        #expect(!(try log.repair(chunk: 0)).unrepairedCodewords.isEmpty, "8 KiB damaged is beyond parity without knowing where")
        try log.setAside(4_000..<16_000)
        #expect(log.appendRefusal == nil, "appends go on past records set aside")
        let more = Files.records([3_000, 5_000], seed: 52)
        try log.append(more[0], committedEnd: 19_000, headSequence: 3, headChain: Self.chain(3))
        try log.append(more[1], committedEnd: 24_000, headSequence: 4, headChain: Self.chain(4))
        let after = try Files.bytes(of: handle)
        let kept = Array(after[Self.physical(4_000..<16_000)]) == Array(image[Self.physical(4_000..<16_000)])
        #expect(kept, "not a byte of the records set aside changed")
        let reopened = try HealingLog(opening: Files.handle(after), headerKey: Self.key, epoch: 1)
        #expect(try reopened.read(at: 0, count: 4_000) == records[0])
        let later = try reopened.read(at: 16_000, count: 8_000) == more[0] + more[1]
        #expect(later)
        // Once the damaged bytes are known (their sectors fail to read), the parity carried through both appends
        // restores them: it is the parity of the bytes as written, not as they read when set aside.
        let known = try HealingLog(
            opening: HealingLogTests.BadSectorHandle(Files.handle(after), unreadable: Self.physical(damaged)), headerKey: Self.key, epoch: 1)
        let repair = try known.repair(chunk: 0)
        #expect(repair.unrepairedCodewords.isEmpty)
        let restored = repair.data == records[0] + records[1] + more[0] + more[1]
        #expect(restored)
    }

    @Test("A cut never recomputes the parity of records set aside; dropping them cuts the log back to where they start, only while nothing was committed after them")
    func dropOnlyAtTheEnd() throws {
        let (image, records, _) = try Self.damagedLastRecord()
        let handle = Files.handle(image)
        let log = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        try log.setAside(4_000..<16_000)
        try log.append(Files.records([2_000], seed: 53)[0], committedEnd: 16_000, headSequence: 2, headChain: Self.chain(2), flushBetween: true)
        #expect(throws: KeychainError.io(operation: "", errno: 0, path: "")) { try log.cut(to: 16_000) }
        #expect(log.writtenEnd == 18_000 && log.setAsideRange == 4_000..<16_000)
        try log.dropSetAside(headSequence: 1, headChain: Self.chain(1))
        #expect(log.setAsideRange == nil && log.writtenEnd == 4_000 && log.committedEnd == 4_000)
        #expect(try handle.size() == HealingLayout.physicalEnd(ofLog: 4_000))
        let reopened = try HealingLogCuttingTests.expectSound(try Files.bytes(of: handle), reads: records[0], "after the drop")
        #expect(reopened.committed?.headSequence == 1 && reopened.committed?.headChain == Self.chain(1))
        #expect(reopened.older == nil, "the slot that committed the dropped records is no older commit")
        try reopened.append([7, 7, 7], committedEnd: 4_003, headSequence: 2, headChain: Self.chain(2))
        _ = try HealingLogCuttingTests.expectSound(try Files.bytes(of: reopened.file as! MemoryFileHandle), reads: records[0] + [7, 7, 7], "after an append")

        // Committed records after them: only a rewrite drops them now.
        let committedAfter = try HealingLog(opening: Files.handle(image), headerKey: Self.key, epoch: 1)
        try committedAfter.setAside(4_000..<16_000)
        try committedAfter.append([1], committedEnd: 16_001, headSequence: 3, headChain: Self.chain(3))
        #expect(throws: KeychainError.invalidParameter("")) { try committedAfter.dropSetAside(headSequence: 1, headChain: Self.chain(1)) }
        #expect(committedAfter.writtenEnd == 16_001 && committedAfter.setAsideRange == 4_000..<16_000)
    }

    @Test("Only committed records above the rewrite end are set aside, one range at a time")
    func setAsideRanges() throws {
        let (image, _, _) = try Self.damagedLastRecord()
        let log = try HealingLog(opening: Files.handle(image), headerKey: Self.key, epoch: 1, rewriteEnd: 350)
        #expect(throws: KeychainError.invalidParameter(""), "nothing to drop") { try log.dropSetAside(headSequence: 0, headChain: Self.chain(0)) }
        for range in [100..<4_000, 4_000..<16_001, 4_000..<4_000] {
            #expect(throws: KeychainError.invalidParameter(""), "\(range)") { try log.setAside(range) }
            #expect(log.setAsideRange == nil && log.appendRefusal == .tailMismatch, "\(range)")
        }
        try log.setAside(4_000..<16_000)
        try log.setAside(4_000..<16_000)
        #expect(throws: KeychainError.invalidParameter("")) { try log.setAside(5_000..<16_000) }
    }

    @Test("When the last write's bytes are missing, setting them all aside lets appends go on; setting aside only some does not")
    func missingLastWrite() throws {
        let (handle, all) = try Files.file(with: Files.records([4_000, 12_000], seed: 54))
        let short = Array(try Files.bytes(of: handle).dropLast(12_000))   // the slot landed, the record and the size did not
        for (range, lifted) in [(4_000..<16_000, true), (10_000..<16_000, false)] {
            let log = try HealingLog(opening: Files.handle(short), headerKey: Self.key, epoch: 1)
            #expect(log.appendRefusal == .lastWriteMissing && log.missingRange == 4_000..<16_000)
            try log.setAside(range)
            #expect((log.appendRefusal == nil) == lifted, "\(range)")
            guard lifted else { continue }
            try log.append([1, 2, 3], committedEnd: 16_003, headSequence: 3, headChain: Self.chain(3))
            let reopened = try HealingLog(opening: log.file, headerKey: Self.key, epoch: 1)
            #expect(try reopened.read(at: 0, count: 4_000) == Array(all[0..<4_000]))
            #expect(try reopened.read(at: 16_000, count: 3) == [1, 2, 3])
        }
    }
}
