import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

/// A version 2 log as a file handle of its logical bytes, for code that reads a log by offsets.
@Suite("Healing: the log as a file handle")
struct HealingFileHandleTests {
    typealias Files = HealingLogTests
    static let key = HealingLogTests.key
    static let chain = HealingLogCuttingTests.chain

    @Test("Appended records read back at their logical offsets, across chunks and in odd pieces; the size is the written end")
    func roundTrip() throws {
        let file = Files.handle([UInt8](repeating: 0, count: HealingLayout.logStart))
        let handle = HealingFileHandle(log: HealingLog(creating: file, headerKey: Self.key, epoch: 1))
        var all: [UInt8] = []
        for (index, record) in Files.records([350, 60_000, 9_000, 80_000], seed: 71).enumerated() {
            all += record
            try handle.append(record, committedEnd: all.count, headSequence: UInt64(index + 1), headChain: Self.chain(index + 1))
            #expect(try handle.size() == all.count)
        }
        let whole = try handle.readExactly(count: all.count, at: 0) == all
        #expect(whole)
        for (offset, count) in [(0, 1), (57_000, 200), (57_088, 57_088), (114_175, 2), (all.count - 1, 1), (1_234, 100_000)] {
            let piece = try handle.readExactly(count: count, at: offset) == Array(all[offset..<(offset + count)])
            #expect(piece, "\(count) bytes at \(offset)")
        }
        var buffer = [UInt8](repeating: 0, count: 10)
        let atEnd = try buffer.withUnsafeMutableBytes { (raw) throws(KeychainError) in try handle.read(into: raw, at: all.count) }
        #expect(atEnd == 0, "nothing past the written end")
        let reopened = HealingFileHandle(log: try HealingLog(opening: file, headerKey: Self.key, epoch: 1))
        let again = try reopened.readExactly(count: try reopened.size(), at: 0) == all
        #expect(again)
    }

    @Test("A positional write, a truncation that extends or reaches below the committed end, and a read before the start throw")
    func refusedOperations() throws {
        let (file, log, committed, parts) = try HealingLogCuttingTests.withUndoneTransaction(committed: [350, 9_000], parts: [4_000], seed: 72)
        let handle = HealingFileHandle(log: log)
        let before = try Files.bytes(of: file)
        #expect(throws: KeychainError.invalidParameter("")) {
            try [UInt8](repeating: 1, count: 10).withBytes { (raw) throws(KeychainError) in _ = try handle.write(raw, at: 100) }
        }
        #expect(throws: KeychainError.invalidParameter("")) {
            try [UInt8](repeating: 1, count: 10).withBytes { (raw) throws(KeychainError) in try handle.writeAll(raw, at: committed.count + parts.count) }
        }
        #expect(throws: KeychainError.invalidParameter("")) { try handle.truncate(to: committed.count + parts.count + 1) }
        #expect(throws: KeychainError.invalidParameter("")) { try handle.truncate(to: committed.count - 1) }
        var buffer = [UInt8](repeating: 0, count: 10)
        #expect(throws: KeychainError.invalidParameter("")) {
            _ = try buffer.withUnsafeMutableBytes { (raw) throws(KeychainError) in try handle.read(into: raw, at: -1) }
        }
        #expect(try Files.bytes(of: file) == before, "nothing changed")
        // Truncating to the committed end cuts the undone transaction.
        try handle.truncate(to: committed.count)
        #expect(try handle.size() == committed.count)
        #expect(try HealingLog(opening: file, headerKey: Self.key, epoch: 1).writtenEnd == committed.count)
    }

    @Test("Reads go through damage that parity repairs — a damaged 4 KiB region of a chunk, of its parity, of the last chunk, 8 KiB unreadable — without writing anything")
    func readsThroughDamage() throws {
        let (handle, all) = try Files.file(with: Files.records([350, 60_000, 9_000, 80_000, 3_000], seed: 73))
        let image = try Files.bytes(of: handle)
        let lastChunk = (all.count - 1) / ChunkParity.dataLength
        for start in [HealingLayout.physical(1_000), HealingLayout.parityOffset(ofChunk: 1) + 100,
                      HealingLayout.physical(lastChunk * ChunkParity.dataLength + 500)] {
            var damaged = image
            for offset in start..<(start + 4_096) { damaged[offset] ^= 0x6B }
            let file = Files.handle(damaged)
            let reader = HealingFileHandle(log: try HealingLog(opening: file, headerKey: Self.key, epoch: 1))
            let read = try reader.readExactly(count: all.count, at: 0) == all
            #expect(read, "4 KiB damaged at \(start)")
            let pieces = try reader.readExactly(count: 5_000, at: 55_000) + reader.readExactly(count: 100, at: 600)
            #expect(pieces == Array(all[55_000..<60_000]) + Array(all[600..<700]), "4 KiB damaged at \(start), read in pieces")
            #expect(try Files.bytes(of: file) == damaged, "a read writes nothing back")
        }
        let unreadable = HealingLayout.physical(20_480) / 512 * 512
        let bad = HealingLogTests.BadSectorHandle(Files.handle(image), unreadable: unreadable..<(unreadable + 8_192))
        let reader = HealingFileHandle(log: try HealingLog(opening: bad, headerKey: Self.key, epoch: 1))
        let read = try reader.readExactly(count: all.count, at: 0) == all
        #expect(read, "8 KiB unreadable")
    }

    @Test("Damage beyond repair reads as it is on disk, where the log alone reads it")
    func unrepairableReadsAsIs() throws {
        let (handle, all) = try Files.file(with: Files.records([350, 60_000], seed: 74))
        var damaged = try Files.bytes(of: handle)
        for offset in HealingLayout.physical(2_000)..<HealingLayout.physical(12_000) { damaged[offset] ^= 0x11 }
        let log = try HealingLog(opening: Files.handle(damaged), headerKey: Self.key, epoch: 1)
        let reader = HealingFileHandle(log: log)
        #expect(try reader.readExactly(count: all.count, at: 0) == log.read(at: 0, count: all.count))
        #expect(try reader.readExactly(count: 10, at: 2_000) != Array(all[2_000..<2_010]))
    }

    @Test("After a cut and an append through the handle, reads give the new bytes, not the repaired old ones")
    func readsAfterChanges() throws {
        let (file, _, committed, parts) = try HealingLogCuttingTests.withUndoneTransaction(committed: [350, 9_000], parts: [4_000], seed: 75)
        // The transaction's part is damaged: the last chunk no longer matches, and a read repairs it.
        var damaged = try Files.bytes(of: file)
        for offset in committed.count..<(committed.count + 1_000) { damaged[HealingLayout.physical(offset)] ^= 0x42 }
        let damagedFile = Files.handle(damaged)
        let reader = HealingFileHandle(log: try HealingLog(opening: damagedFile, headerKey: Self.key, epoch: 1))
        let read = try reader.readExactly(count: committed.count + parts.count, at: 0) == committed + parts
        #expect(read)
        try reader.truncate(to: committed.count)
        let other = Files.records([4_000], seed: 76)[0]
        try reader.append(other, committedEnd: committed.count + other.count, headSequence: 3, headChain: Self.chain(3))
        let after = try reader.readExactly(count: committed.count + other.count, at: 0) == committed + other
        #expect(after)
    }
}
