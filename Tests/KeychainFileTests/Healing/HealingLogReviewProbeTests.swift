import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

/// Review probes (helper-28): a crash between the write-back that extends a short file and the restore of the
/// parity the short file lost (SPEC §26.5: "never leaving the zeros an extended file reads as in place of a
/// complete chunk's parity").
@Suite("Healing: review probes for the parity a short file lost")
struct HealingLogReviewProbeTests {
    typealias Files = HealingLogTests
    static let key = HealingLogTests.key
    static let chain = HealingLogCuttingTests.chain
    static let secondChunk = ChunkParity.dataLength

    /// The parity of chunk 0 as the file holds it.
    static func storedParityOfChunk0(_ bytes: [UInt8]) -> [UInt8] {
        let start = HealingLayout.parityOffset(ofChunk: 0)
        return Array(bytes[start..<(start + ChunkParity.parityLength)])
    }

    @Test(
        "A crash after the write-back of the last chunk extended a file that lost a completed chunk's parity, before that parity was restored: the next writer still restores it",
        arguments: [ChunkParity.parityLength, 2_000])
    func crashAfterWriteBackExtension(lost: Int) throws {
        // 350 bytes committed; the last write (56,738 + 3,000 bytes, two records) completes chunk 0 exactly and
        // puts 3,000 bytes in chunk 1. Its records in chunk 0 verify as read (the replay asks for no repair of
        // chunk 0); chunk 1 is rebuilt from the slot's parity.
        let records = Files.records([350, 56_738, 3_000], seed: 281)
        let (written, _) = try Files.file(with: [records[0]])
        let all = records[0] + records[1] + records[2]
        try HealingLog(opening: written, headerKey: Self.key, epoch: 1)
            .append(records[1] + records[2], committedEnd: all.count, headSequence: 3, headChain: Self.chain(3))
        let full = try Files.bytes(of: written)
        let expectedParity = ChunkParity(chunk: Array(all[..<Self.secondChunk])).bytes
        #expect(Self.storedParityOfChunk0(full) == expectedParity)
        // The file lost the end of chunk 0's parity and all of chunk 1.
        let handle = Files.handle(Array(full[..<(HealingLayout.physical(Self.secondChunk) - lost)]))
        let log = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        try #require(log.appendRefusal == .lastWriteMissing)
        let repair = try log.repair(chunk: 1)
        let rebuilt = repair.data == Array(all[Self.secondChunk...])
        try #require(rebuilt && repair.unrepairedCodewords.isEmpty)
        // As the next writer does before its write-backs: the parity of the chunks that verified as they read.
        try log.restoreParity(ofChunksBelow: all.count, except: [1])
        try log.writeBack(repair)
        // The process ends here (a crash, a kill, or confirmLastChunk failing): the next writer opens the file.
        let reopened = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        if reopened.appendRefusal == .lastWriteMissing || reopened.appendRefusal == .tailMismatch {
            try reopened.confirmLastChunk()
        }
        let next = Files.records([500], seed: 282)[0]
        try reopened.append(next, committedEnd: all.count + next.count, headSequence: 4, headChain: Self.chain(4))
        #expect(
            Self.storedParityOfChunk0(try Files.bytes(of: handle)) == expectedParity,
            "chunk 0's parity after the crash and the next append: not the zeros the write-back's extension left")
    }

    @Test("A crash after a write-back extended a file that lost a completed chunk's whole parity, before the records set aside past it were dropped: dropping them after the reopen still restores that parity")
    func crashAfterWriteBackThenDropSetAside() throws {
        // 350 bytes committed; the last write (56,738 + 1,000 + 2,000 bytes) completes chunk 0 exactly. The file
        // lost chunk 0's whole parity and all of chunk 1.
        let records = Files.records([350, 56_738, 1_000, 2_000], seed: 283)
        let (written, _) = try Files.file(with: [records[0]])
        let all = records.reduce([], +)
        try HealingLog(opening: written, headerKey: Self.key, epoch: 1)
            .append(Array(all[350...]), committedEnd: all.count, headSequence: 4, headChain: Self.chain(4))
        let full = try Files.bytes(of: written)
        let expectedParity = ChunkParity(chunk: Array(all[..<Self.secondChunk])).bytes
        let handle = Files.handle(Array(full[..<HealingLayout.parityOffset(ofChunk: 0)]))
        let log = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        try #require(log.appendRefusal == .lastWriteMissing)
        // The replay rebuilt the 1,000-byte record and wrote it back (the changed bytes of a record that verified,
        // at their place past the file's end); the 2,000-byte one did not verify (the test's stand-in).
        let keptEnd = Self.secondChunk + 1_000
        let rebuilt = Array(all[Self.secondChunk..<keptEnd])
        try rebuilt.withBytes { (raw) throws(KeychainError) in try handle.writeAll(raw, at: HealingLayout.physical(Self.secondChunk)) }
        try handle.sync()
        // The process ends here; the next writer opens the file, sets the unverified record aside and drops it.
        let reopened = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        try reopened.setAside(keptEnd..<all.count)
        try reopened.dropSetAside(headSequence: 3, headChain: Self.chain(3))
        #expect(reopened.appendRefusal == nil && reopened.writtenEnd == keptEnd)
        #expect(
            Self.storedParityOfChunk0(try Files.bytes(of: handle)) == expectedParity,
            "chunk 0's parity after the crash and the drop: not the zeros the write-back's extension left")
    }

    @Test("A crash inside confirmLastChunk after its first change (now the parity's write, before the file is extended): the next writer finds the parity in place, or restores it")
    func crashAfterConfirmLastChunkExtended() throws {
        // 350 + 56,738 bytes: the last write completes chunk 0 exactly; the file lost all of chunk 0's parity.
        let records = Files.records([350, 56_738], seed: 284)
        let (written, all) = try Files.file(with: records)
        let full = try Files.bytes(of: written)
        let expectedParity = ChunkParity(chunk: all).bytes
        let short = Array(full[..<HealingLayout.parityOffset(ofChunk: 0)])
        let recording = Files.RecordingHandle(Files.handle(short))
        let log = try HealingLog(opening: recording, headerKey: Self.key, epoch: 1)
        try #require(log.appendRefusal == .lastWriteMissing)
        try log.confirmLastChunk()
        // The file as a crash just after confirmLastChunk's first change left it: that change (a new size —
        // ftruncate is metadata, which a journal commits on its own schedule — or a write), none of the later ones.
        var image = short
        switch recording.events.first {
        case .truncate(let size)?:
            image += [UInt8](repeating: 0, count: max(0, size - image.count))
        case .write(let offset, let bytes)?:
            image += [UInt8](repeating: 0, count: max(0, offset + bytes.count - image.count))
            image.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
        default:
            Issue.record("confirmLastChunk changed nothing: \(recording.events.first.map { "\($0)" } ?? "none")")
            return
        }
        let handle = Files.handle(image)
        let reopened = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        if reopened.appendRefusal == .lastWriteMissing || reopened.appendRefusal == .tailMismatch {
            try reopened.confirmLastChunk()
        }
        let next = Files.records([500], seed: 285)[0]
        try reopened.append(next, committedEnd: all.count + next.count, headSequence: 3, headChain: Self.chain(3))
        #expect(
            Self.storedParityOfChunk0(try Files.bytes(of: handle)) == expectedParity,
            "chunk 0's parity after the crash and the next append: not the zeros the extension left")
    }
}
