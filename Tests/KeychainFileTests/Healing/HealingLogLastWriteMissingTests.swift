import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

/// A last write whose commit slot reached the disk before its bytes and the file's new size (Docs/FormatVersion2.md
/// §3 rule 4): the file is shorter than the slot says, and appends are refused (``HealingLogRefusal/lastWriteMissing``)
/// until the caller rebuilt the missing records from parity, verified them, and wrote them back — then they go on.
/// The missing bytes here lie only in the last chunk (the chunks before it and their parity are on disk), also when
/// the write began in the chunk before; when an earlier chunk's parity is missing too, the refusal stays until that
/// parity is back.
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

    @Test("A last write that ended a chunk, the file cut inside that chunk's parity: confirmLastChunk leaves the file and the refusal as they are; once the parity is repaired and written back, it lifts the refusal")
    func earlierParityMissingIsNotConfirmedOver() throws {
        // 350 + 56,738 bytes: the last write completes chunk 0 exactly, and its parity lies past its data.
        let (full, all) = try Self.image(of: Files.records([350, 56_738], seed: 75))
        #expect(all.count == Self.secondChunk)
        let image = Array(full.dropLast(3_000))
        let handle = Files.handle(image)
        let log = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        #expect(log.appendRefusal == .lastWriteMissing && log.writtenEnd == all.count)
        let read = try log.read(at: 0, count: all.count) == all
        #expect(read, "every record reads as it was written: the caller verifies them all")
        let counter = try #require(log.committed).counter

        try log.confirmLastChunk()
        #expect(try Files.bytes(of: handle) == image, "nothing written: not the file's size, not a slot")
        #expect(log.appendRefusal == .lastWriteMissing && log.committed?.counter == counter)
        let refusal = #expect(throws: KeychainError.self, "an append over a chunk whose parity is missing") {
            try log.append([7], committedEnd: all.count + 1, headSequence: 3, headChain: Self.chain(3))
        }
        #expect(refusal.map { "\($0)".contains("the last write did not reach the disk whole") } == true, "\(String(describing: refusal))")
        #expect(try Files.bytes(of: handle) == image)

        // Chunk 0's parity, repaired from its data and written back, reaches the last chunk's start: then the
        // refusal goes.
        let repair = try log.repair(chunk: 0)
        #expect(repair.changedOffsets.isEmpty && repair.unrepairedCodewords.isEmpty && repair.parityChanged)
        try log.writeBack(repair)
        #expect(log.appendRefusal == .lastWriteMissing)
        try log.confirmLastChunk()
        #expect(log.appendRefusal == nil)
        let next = Files.records([500], seed: 76)[0]
        try log.append(next, committedEnd: all.count + next.count, headSequence: 3, headChain: Self.chain(3))
        _ = try HealingLogCuttingTests.expectSound(try Files.bytes(of: handle), reads: all + next, "after the parity was written back")
    }
}
