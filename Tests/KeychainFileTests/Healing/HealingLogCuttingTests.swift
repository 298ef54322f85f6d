import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

/// Taking back what was never committed (Docs/FormatVersion2.md §3 rules 3 and 4, §5): a cut for an undone
/// transaction, a remnant past the written end, the slot written before a cut, and the failures that must keep
/// a log from writing again.
@Suite("Healing: cutting the log back, remnants and stale slots")
struct HealingLogCuttingTests {
    typealias Files = HealingLogTests
    static let key = HealingLogTests.key

    /// A chain value that tells record `index` apart.
    static func chain(_ index: Int) -> [UInt8] { [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 16) }

    /// Committed records `committed`, then the parts of a transaction `parts` (appended without moving the
    /// committed end), in a file. Returns the handle, the open log, the committed bytes and the parts' bytes.
    static func withUndoneTransaction(
        committed: [Int], parts: [Int], seed: UInt64
    ) throws -> (handle: MemoryFileHandle, log: HealingLog, committed: [UInt8], parts: [UInt8]) {
        let records = Files.records(committed + parts, seed: seed)
        let handle = Files.handle([UInt8](repeating: 0, count: HealingLayout.logStart))
        let log = HealingLog(creating: handle, headerKey: key, epoch: 1)
        var all: [UInt8] = []
        var committedEnd = 0
        for (index, record) in records.enumerated() {
            all += record
            if index < committed.count { committedEnd = all.count }
            try log.append(record, committedEnd: committedEnd, headSequence: UInt64(min(index, committed.count - 1) + 1),
                           headChain: chain(min(index, committed.count - 1) + 1), flushBetween: index >= committed.count)
        }
        return (handle, log, Array(all[0..<committedEnd]), Array(all[committedEnd...]))
    }

    /// Opens `bytes` again, checks that it reads `expected`, that appends are not refused, and that every chunk's
    /// parity matches its bytes.
    static func expectSound(_ bytes: [UInt8], reads expected: [UInt8], _ comment: Comment) throws -> HealingLog {
        let log = try HealingLog(opening: Files.handle(bytes), headerKey: key, epoch: 1)
        #expect(log.writtenEnd == expected.count, comment)
        #expect(log.appendRefusal == nil, comment)
        let read = try log.read(at: 0, count: expected.count) == expected
        #expect(read, comment)
        for chunk in 0..<((expected.count + ChunkParity.dataLength - 1) / ChunkParity.dataLength) {
            let repair = try log.repair(chunk: chunk)
            #expect(repair.changedOffsets.isEmpty && repair.unrepairedCodewords.isEmpty && !repair.parityChanged, "\(comment): chunk \(chunk)")
        }
        return log
    }

    @Test("cut(to:) takes back an undone transaction across a chunk boundary: the log then opens, appends and repairs as if its parts were never written")
    func cutUndoneTransaction() throws {
        let (handle, log, committed, parts) = try Self.withUndoneTransaction(committed: [350, 20_000], parts: [30_000, 15_000], seed: 21)
        #expect(log.writtenEnd == committed.count + parts.count && log.committedEnd == committed.count)
        try log.cut(to: committed.count)
        #expect(log.writtenEnd == committed.count)
        #expect(try handle.size() == HealingLayout.physicalEnd(ofLog: committed.count), "the file ends where the log now does")
        let reopened = try Self.expectSound(try Files.bytes(of: handle), reads: committed, "after the cut")
        #expect(reopened.committed?.committedEnd == UInt64(committed.count) && reopened.committed?.headSequence == 2)
        #expect(reopened.older == nil, "the slot from before the cut describes bytes that are gone")
        // The log grows again over the cut bytes, into chunk 1 whose old parity was cut with them.
        let more = Files.records([40_000], seed: 22)[0]
        try reopened.append(more, committedEnd: committed.count + more.count, headSequence: 3, headChain: Self.chain(3))
        _ = try Self.expectSound(try Files.bytes(of: reopened.file as! MemoryFileHandle), reads: committed + more, "after an append")
    }

    @Test("A cut below the committed end or past the written end is refused with invalidParameter, and changes nothing")
    func cutOutOfRange() throws {
        let (handle, log, committed, parts) = try Self.withUndoneTransaction(committed: [5_000], parts: [2_000], seed: 23)
        let before = try Files.bytes(of: handle)
        for end in [0, committed.count - 1, committed.count + parts.count + 1] {
            #expect(throws: KeychainError.invalidParameter("")) { try log.cut(to: end) }
            #expect(try Files.bytes(of: handle) == before, "cut to \(end)")
            #expect(log.writtenEnd == committed.count + parts.count && log.appendRefusal == nil, "cut to \(end)")
        }
    }

    @Test("A crash inside a cut leaves the commit before it, or the cut and perhaps a remnant, which the next writer cuts off")
    func crashInsideCut() throws {
        let (handle, _, committed, parts) = try Self.withUndoneTransaction(committed: [350, 9_000], parts: [6_000], seed: 24)
        let base = try Files.bytes(of: handle)
        let recording = Files.RecordingHandle(Files.handle(base))
        try HealingLog(opening: recording, headerKey: Self.key, epoch: 1).cut(to: committed.count)
        guard case .write(let slotOffset, let slotBytes)? = recording.events.first,
              recording.events.dropFirst().contains(where: { if case .truncate = $0 { true } else { false } })
        else {
            Issue.record("a cut writes its slot first, then truncates: \(recording.events)")
            return
        }
        var torn = base
        Files.apply((slotOffset, [UInt8](repeating: 0x5A, count: slotBytes.count / 2)), to: &torn)
        var slotOnly = base
        Files.apply((slotOffset, slotBytes), to: &slotOnly)
        for (name, image, cut) in [("torn slot", torn, false), ("slot without the new size", slotOnly, true)] {
            let log = try HealingLog(opening: Files.handle(image), headerKey: Self.key, epoch: 1)
            #expect(log.writtenEnd == (cut ? committed.count : committed.count + parts.count), "\(name)")
            #expect(log.appendRefusal == nil, "\(name)")
            let next = Files.records([1_000], seed: 25)[0]
            if !cut { try log.cut(to: committed.count) }
            try log.append(next, committedEnd: committed.count + next.count, headSequence: 3, headChain: Self.chain(3))
            let bytes = try Files.bytes(of: log.file as! MemoryFileHandle)
            #expect(bytes.count == HealingLayout.physicalEnd(ofLog: committed.count + next.count), "\(name): no remnant left")
            _ = try Self.expectSound(bytes, reads: committed + next, "\(name)")
        }
    }

    @Test("The next writer cuts off a remnant past the written end before it appends")
    func remnantCutByNextWriter() throws {
        let (handle, all) = try Files.file(with: Files.records([350, 9_000], seed: 26))
        let remnant = try Files.bytes(of: handle) + [UInt8](repeating: 0xEE, count: 70_000)
        let log = try HealingLog(opening: Files.handle(remnant), headerKey: Self.key, epoch: 1)
        #expect(log.writtenEnd == all.count && log.appendRefusal == nil, "a longer file opens: rule 3")
        let next = Files.records([500], seed: 27)[0]
        try log.append(next, committedEnd: all.count + next.count, headSequence: 3, headChain: Self.chain(3))
        let bytes = try Files.bytes(of: log.file as! MemoryFileHandle)
        #expect(bytes.count == HealingLayout.physicalEnd(ofLog: all.count + next.count))
        _ = try Self.expectSound(bytes, reads: all + next, "after the append")
    }

    @Test("A slot written before a cut is no older commit: the file may be shorter than its end, and its parity proposes nothing")
    func slotFromBeforeCut() throws {
        let (handle, log, committed, _) = try Self.withUndoneTransaction(committed: [350, 9_000], parts: [20_000], seed: 28)
        try log.cut(to: committed.count)
        let afterCut = try Files.bytes(of: handle)
        // The next append crashed before its slot: its bytes are a remnant, and the slots are the cut's and the one before it.
        let recording = Files.RecordingHandle(Files.handle(afterCut))
        let writer = try HealingLog(opening: recording, headerKey: Self.key, epoch: 1)
        try writer.append(Files.records([3_000], seed: 29)[0], committedEnd: committed.count + 3_000, headSequence: 3, headChain: Self.chain(3))
        var image = afterCut
        Files.apply(recording.writes[0], to: &image)
        // And the acknowledged bytes are damaged beyond the newest slot's parity (17 bytes in codeword 7).
        for symbol in 0..<17 { image[HealingLayout.physical(symbol * 256 + 7)] ^= 0x33 }
        let reopened = try HealingLog(opening: Files.handle(image), headerKey: Self.key, epoch: 1)
        #expect(reopened.writtenEnd == committed.count)
        #expect(reopened.older == nil, "the slot from before the cut says the log reaches \(committed.count + 20_000)")
        let repair = try reopened.repair(chunk: 0)
        #expect(repair.unrepairedCodewords == [7], "nothing is proposed from the stale slot's parity")
        #expect(repair.changedOffsets.isEmpty)
    }

    @Test("After a write fails, a repair written back does not lift the refusal: only opening the log again does")
    func failedWriteStaysRefused() throws {
        let (handle, all) = try Files.file(with: Files.records([350, 9_000], seed: 30))
        let recording = Files.RecordingHandle(Files.handle(try Files.bytes(of: handle)))
        let log = try HealingLog(opening: recording, headerKey: Self.key, epoch: 1)
        recording.failNextSync = true
        #expect(throws: KeychainError.self) {
            try log.append([1, 2, 3], committedEnd: all.count + 3, headSequence: 3, headChain: Self.chain(3))
        }
        guard case .failedWrite? = log.appendRefusal else {
            Issue.record("a failed append refuses further writes: \(String(describing: log.appendRefusal))")
            return
        }
        try log.writeBack(try log.repair(chunk: 0))
        #expect(throws: KeychainError.self) {
            try log.append([4, 5, 6], committedEnd: all.count + 3, headSequence: 3, headChain: Self.chain(3))
        }
        #expect(throws: KeychainError.self) { try log.cut(to: all.count) }
    }

    @Test("A repair of the last chunk whose slot parity was damaged commits the corrected parity, so the next open appends")
    func damagedSlotParityHealed() throws {
        let (handle, all) = try Files.file(with: Files.records([350, 9_000, 2_000], seed: 31))
        var image = try Files.bytes(of: handle)
        let place = 1   // counter 3
        let parityStart = HealingLayout.slotOffsets[place] + Seal.encodedLength
        for offset in parityStart..<(parityStart + 4_096) { image[offset] ^= 0x77 }
        let damaged = Files.handle(image)
        let log = try HealingLog(opening: damaged, headerKey: Self.key, epoch: 1)
        #expect(log.appendRefusal == .tailMismatch)
        let repair = try log.repair(chunk: 0)
        #expect(repair.unrepairedCodewords.isEmpty && repair.changedOffsets.isEmpty && repair.parityChanged)
        try log.writeBack(repair)
        #expect(log.committed?.counter == 4, "a commit of the same ends")
        _ = try Self.expectSound(try Files.bytes(of: damaged), reads: all, "after the write-back")
    }

    @Test("A commit counter one below UInt64.max takes no further commit (the next would not be read)")
    func counterExhausted() throws {
        let image = [UInt8](repeating: 0, count: HealingLayout.logStart)
        let seal = Seal(epoch: 1, counter: UInt64.max - 1, writtenEnd: 0, committedEnd: 0, headSequence: 0, headChain: Self.chain(0))
        var bytes = image
        Files.apply((HealingLayout.slotOffsets[0], CommitSlot(seal: seal, parity: ChunkParity()).encoded(headerKey: Self.key)), to: &bytes)
        let log = try HealingLog(opening: Files.handle(bytes), headerKey: Self.key, epoch: 1)
        #expect(log.committed?.counter == UInt64.max - 1)
        #expect(throws: KeychainError.limitReached("")) {
            try log.append([1], committedEnd: 1, headSequence: 1, headChain: Self.chain(1))
        }
    }
}
