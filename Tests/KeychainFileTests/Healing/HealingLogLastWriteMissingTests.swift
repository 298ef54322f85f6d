import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

/// A last write whose commit slot reached the disk before its bytes and the file's new size (Docs/FormatVersion2.md
/// §3 rule 4): the file is shorter than the slot says, and appends are refused (``HealingLogRefusal/lastWriteMissing``)
/// until the caller rebuilt the missing records from parity, verified them, and wrote them back — then they go on.
/// The missing bytes here lie only in the last chunk (the chunks before it and their parity are on disk), also when
/// the write began in the chunk before; when the parity of a chunk the write completed is missing too, it is
/// computed again from the chunk's verified bytes before the commit that lifts the refusal.
@Suite("Healing: a last write whose bytes did not reach the disk")
struct HealingLogLastWriteMissingTests {
    typealias Files = HealingLogTests
    static let key = HealingLogTests.key
    static let chain = HealingLogCuttingTests.chain

    /// Where the log's second chunk starts.
    static let secondChunk = ChunkParity.dataLength

    /// The file bytes of `records` committed one by one, and the log's bytes.
    static func image(of records: [[UInt8]]) throws -> (bytes: [UInt8], log: [UInt8]) {
        let (handle, log) = try Files.file(with: records)
        return (try Files.bytes(of: handle), log)
    }

    @Test(
        "A last write that began in the chunk before and whose bytes are missing only from the last chunk: the slot's parity rebuilds them, their write-back lifts the refusal, and the log takes the next append",
        arguments: [-3_000, 0, 1_500, 3_000])
    func missingOnlyInLastChunk(keptOfLastChunk: Int) throws {
        // 350 + 50,000 bytes acknowledged; the last write, 10,000 bytes, completes chunk 0 (its parity written with
        // it) and puts 3,262 bytes in chunk 1.
        let records = Files.records([350, 50_000, 10_000], seed: 71)
        let (full, all) = try Self.image(of: records)
        let lastWriteStart = 350 + 50_000
        #expect(lastWriteStart < Self.secondChunk && all.count > Self.secondChunk)
        // The file ends inside chunk 1, at its start, or (-3,000) inside chunk 0's parity, which the repair of
        // chunk 0 puts back before chunk 1's.
        let size = HealingLayout.physical(Self.secondChunk) + keptOfLastChunk
        let handle = Files.handle(Array(full[..<size]))
        let log = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        #expect(log.writtenEnd == all.count && log.appendRefusal == .lastWriteMissing)
        #expect(log.missingRange == lastWriteStart..<all.count)
        #expect(throws: KeychainError.io(operation: "", errno: 0, path: "")) {
            try log.append([1], committedEnd: all.count + 1, headSequence: 4, headChain: Self.chain(4))
        }
        // As the replay does: each chunk's proposal, verified against the records (the test's stand-in for their
        // tags), written back when it changes anything.
        for chunk in 0...1 {
            let start = chunk * ChunkParity.dataLength
            let repair = try log.repair(chunk: chunk)
            let verified = repair.data == Array(all[start..<min(all.count, start + ChunkParity.dataLength)])
            #expect(verified && repair.unrepairedCodewords.isEmpty, "chunk \(chunk)")
            if !repair.changedOffsets.isEmpty || repair.parityChanged { try log.writeBack(repair) }
        }
        #expect(log.appendRefusal == nil, "the records of the last write are whole again")
        #expect(log.missingRange == nil)
        #expect(try handle.size() == HealingLayout.physicalEnd(ofLog: all.count))
        let next = Files.records([1_000], seed: 72)[0]
        try log.append(next, committedEnd: all.count + next.count, headSequence: 4, headChain: Self.chain(4))
        _ = try HealingLogCuttingTests.expectSound(try Files.bytes(of: handle), reads: all + next, "kept \(keptOfLastChunk) of chunk 1")
    }

    @Test("A last write missing its final bytes, with a codeword of the slot's parity beyond repair: confirmLastChunk extends the file over the verified zeros and commits the parity of the verified bytes")
    func partlyConfirmedRepairExtendsTheFile() throws {
        // The last record ends with 40 zero bytes, and the file lost its last 100: a repair leaves the zeros as
        // they read (past the end of the file), and the caller verifies them so.
        var records = Files.records([350, 20_000, 5_000], seed: 73)
        for index in (5_000 - 40)..<5_000 { records[2][index] = 0 }
        let (full, all) = try Self.image(of: records)
        var image = Array(full.dropLast(100))
        let missing = (all.count - 100)..<all.count
        // Seventeen symbols of codeword 100 of the newest slot's parity damaged: more than it corrects. No missing
        // byte lies in that codeword (they are in 162...255 and 0...5).
        let damagedCodeword = 100
        #expect(!missing.contains { $0 % ChunkParity.depth == damagedCodeword })
        let place = Int(try #require(HealingLog(opening: Files.handle(full), headerKey: Self.key, epoch: 1).committed).counter % 2)
        let parityStart = HealingLayout.slotOffsets[place] + Seal.encodedLength
        for symbol in 0..<17 { image[parityStart + symbol * ChunkParity.depth + damagedCodeword] ^= 0x5A }
        let handle = Files.handle(image)
        let log = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        #expect(log.appendRefusal == .lastWriteMissing && log.missingRange == 20_350..<all.count)

        let repair = try log.repair(chunk: 0)
        #expect(repair.unrepairedCodewords == [damagedCodeword])
        let verified = repair.data == all
        #expect(verified, "every record verifies through the repair")
        try log.writeBack(repair)
        #expect(log.appendRefusal == .lastWriteMissing, "a repair confirmed only in part does not lift the refusal")
        // The changed bytes were written; the zeros past the last of them were not: the file is still short.
        let lastChanged = missing.last { all[$0] != 0 }.map { $0 + 1 } ?? missing.lowerBound
        #expect(try handle.size() == HealingLayout.physical(lastChanged))
        try #require(try handle.size() < HealingLayout.physicalEnd(ofLog: all.count))

        let counter = try #require(log.committed).counter
        try log.confirmLastChunk()
        #expect(log.appendRefusal == nil && log.missingRange == nil)
        #expect(try handle.size() == HealingLayout.physicalEnd(ofLog: all.count), "extended to the written end")
        #expect(log.committed?.counter == counter + 1 && log.writtenEnd == all.count && log.committedEnd == all.count)
        #expect(log.newest?.parity == ChunkParity(chunk: all), "the parity of the verified bytes, committed")
        let next = Files.records([2_000], seed: 74)[0]
        try log.append(next, committedEnd: all.count + next.count, headSequence: 4, headChain: Self.chain(4))
        _ = try HealingLogCuttingTests.expectSound(try Files.bytes(of: handle), reads: all + next, "after the next append")
    }

    @Test(
        "A last write that ended a chunk, the file cut inside that chunk's parity (or without any of it): confirmLastChunk, over records the caller verified, writes that parity again from them before its commit, and the log takes the next append",
        arguments: [3_000, ChunkParity.parityLength])
    func earlierParityMissingIsRestored(lost: Int) throws {
        // 350 + 56,738 bytes: the last write completes chunk 0 exactly, and its parity lies past its data.
        let (full, all) = try Self.image(of: Files.records([350, 56_738], seed: 75))
        #expect(all.count == Self.secondChunk)
        let handle = Files.handle(Array(full.dropLast(lost)))
        let log = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        #expect(log.appendRefusal == .lastWriteMissing && log.writtenEnd == all.count)
        let read = try log.read(at: 0, count: all.count) == all
        #expect(read, "every record reads as it was written: the caller verifies them all")
        let counter = try #require(log.committed).counter

        try log.confirmLastChunk()
        #expect(log.appendRefusal == nil && log.missingRange == nil && log.committed?.counter == counter + 1)
        let bytes = try Files.bytes(of: handle)
        let logAsWritten = bytes.count == full.count && bytes[HealingLayout.logStart...] == full[HealingLayout.logStart...]
        #expect(logAsWritten, "chunk 0's parity is back, computed from its bytes: the log's chunks are as they were written")
        let next = Files.records([500], seed: 76)[0]
        try log.append(next, committedEnd: all.count + next.count, headSequence: 3, headChain: Self.chain(3))
        _ = try HealingLogCuttingTests.expectSound(try Files.bytes(of: handle), reads: all + next, "after the parity was put back")
    }

    @Test("A last write that completed a chunk and whose end did not verify, the file cut inside that chunk's parity: the cut back to the records that did puts the parity back before its commit")
    func cutOverChunkWhoseParityIsMissing() throws {
        // 350 bytes acknowledged; the last write, 60,000 bytes, completes chunk 0 and puts 3,262 bytes in chunk 1.
        // The file lost the end of chunk 0's parity and all of chunk 1: the records past chunk 0 do not verify,
        // the replay keeps the log to chunk 0's end and cuts the rest.
        let records = Files.records([350, 60_000], seed: 77)
        let (written, _) = try Files.file(with: [records[0]])
        // The last write is a transaction's first part: nothing of it is committed.
        try HealingLog(opening: written, headerKey: Self.key, epoch: 1)
            .append(records[1], committedEnd: 350, headSequence: 1, headChain: Files.chain)
        let full = try Files.bytes(of: written)
        let all = records[0] + records[1]
        #expect(all.count > Self.secondChunk)
        let short = Array(full[..<(HealingLayout.physical(Self.secondChunk) - 2_000)])
        let handle = Files.handle(short)
        let log = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        #expect(log.appendRefusal == .lastWriteMissing && log.writtenEnd == all.count)
        // The committed end is the first record's: a cut to chunk 0's end keeps only bytes that were written
        // (the test's stand-in for records that verified there).
        try log.cut(to: Self.secondChunk)
        #expect(log.appendRefusal == nil && log.writtenEnd == Self.secondChunk)
        let bytes = try Files.bytes(of: handle)
        #expect(bytes.count == HealingLayout.physicalEnd(ofLog: Self.secondChunk))
        let parityStart = HealingLayout.parityOffset(ofChunk: 0)
        #expect(
            Array(bytes[parityStart..<(parityStart + ChunkParity.parityLength)]) == ChunkParity(chunk: Array(all[..<Self.secondChunk])).bytes,
            "chunk 0's parity, computed from its bytes, not the zeros the file was extended with")
    }

    @Test("A last write that completed a chunk and whose records past it were set aside, the file cut inside that chunk's parity: dropping them puts the parity back before its commit")
    func dropSetAsideOverChunkWhoseParityIsMissing() throws {
        // 350 bytes, then a last write of 60,000 bytes, both committed; the file lost the end of chunk 0's parity
        // and all of chunk 1. The records from byte 58,000 do not verify (the test's stand-in): set aside, then
        // dropped, which takes the log back to byte 58,000, past chunk 0.
        let records = Files.records([350, 60_000], seed: 78)
        let (full, all) = try Self.image(of: records)
        let short = Array(full[..<(HealingLayout.physical(Self.secondChunk) - 2_000)])
        let handle = Files.handle(short)
        let log = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        #expect(log.appendRefusal == .lastWriteMissing && log.committedEnd == all.count)
        // The records it keeps in chunk 1 were rebuilt from the slot's parity and written back, as the replay
        // does, at their place past the file's end (the file now reads zeros where chunk 0's parity was lost).
        let rebuilt = Array(all[Self.secondChunk..<58_000])
        try rebuilt.withBytes { (raw) throws(KeychainError) in try handle.writeAll(raw, at: HealingLayout.physical(Self.secondChunk)) }
        try log.setAside(58_000..<all.count)
        try log.dropSetAside(headSequence: 2, headChain: Self.chain(2))
        #expect(log.appendRefusal == nil && log.writtenEnd == 58_000 && log.committedEnd == 58_000)
        let bytes = try Files.bytes(of: handle)
        let parityStart = HealingLayout.parityOffset(ofChunk: 0)
        #expect(
            Array(bytes[parityStart..<(parityStart + ChunkParity.parityLength)]) == ChunkParity(chunk: Array(all[..<Self.secondChunk])).bytes,
            "chunk 0's parity, computed from its bytes, not the zeros the file was extended with")
    }
}
