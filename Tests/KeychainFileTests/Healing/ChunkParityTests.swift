import Foundation
import Testing
@testable import KeychainFile

/// The parity of a format version 2 chunk (Docs/FormatVersion2.md §2): kept up to date append by append at
/// fixed symbol positions, equal to the parity encoded from scratch and to reedsolo's, and repairing a chunk
/// laid out as on disk (data, zeros to a multiple of 256, parity) from any damaged 4 KiB region.
@Suite("Healing: the parity of a chunk, appended to and repaired")
struct ChunkParityTests {
    private static func randomBytes(_ count: Int, _ random: inout TestRandom) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    /// The first parity offset where `a` and `b` differ, or nil: a failure prints a number, not 8 KiB.
    private static func firstDifference(_ a: ChunkParity, _ b: ChunkParity) -> Int? {
        zip(a.bytes, b.bytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset
    }

    @Test("Parity updated after every append equals the parity encoded from scratch", arguments: [1, 2, 3])
    func incrementalEqualsFromScratch(seed: UInt64) {
        var random = TestRandom(seed: seed)
        var chunk: [UInt8] = []
        var parity = ChunkParity()
        #expect(Self.firstDifference(parity, ChunkParity(chunk: [])) == nil)
        var appends = 0
        while chunk.count < ChunkParity.dataLength {
            // Mostly record-sized appends, sometimes one that crosses many rows, up to the chunk's end exactly.
            let size = min(ChunkParity.dataLength - chunk.count, Int.random(in: 0...3, using: &random) == 0 ? Int.random(in: 1...9_000, using: &random) : Int.random(in: 1...600, using: &random))
            let piece = Self.randomBytes(size, &random)
            parity.append(piece, at: chunk.count)
            chunk += piece
            appends += 1
            if appends % 7 == 0 || chunk.count == ChunkParity.dataLength {
                #expect(Self.firstDifference(parity, ChunkParity(chunk: chunk)) == nil, "after \(appends) appends, \(chunk.count) bytes")
            }
        }
        #expect(appends > 20)
    }

    @Test("Each codeword's parity is reedsolo's for the same 223-symbol message")
    func agreesWithReedsolo() throws {
        let vectors = try ReedSolomonVectorTests.vectors()
        let full = vectors.cases.filter { $0.nsym == ChunkParity.paritySymbols && $0.data.count == 2 * ChunkParity.dataSymbols }
        try #require(!full.isEmpty, "the vectors have RS(255, 223) cases of full length")
        for vector in full {
            let message = try hex(vector.data)
            let expected = try hex(vector.parity)
            // Codeword j holds the vector's message, rotated by j so that the codewords differ.
            var chunk = [UInt8](repeating: 0, count: ChunkParity.dataLength)
            for codeword in 0..<ChunkParity.depth {
                for symbol in 0..<ChunkParity.dataSymbols { chunk[symbol * ChunkParity.depth + codeword] = message[symbol] }
            }
            let parity = ChunkParity(chunk: chunk)
            var incremental = ChunkParity()
            incremental.append(chunk, at: 0)
            for codeword in [0, 1, 128, 255] {
                let got = (0..<ChunkParity.paritySymbols).map { parity.bytes[$0 * ChunkParity.depth + codeword] }
                #expect(got == expected, "codeword \(codeword)")
            }
            #expect(Self.firstDifference(incremental, parity) == nil)
        }
    }

    /// A chunk of `count` random bytes as it lies on disk: data, zeros up to a multiple of 256, then parity.
    private static func physical(_ count: Int, seed: UInt64) -> (data: [UInt8], disk: [UInt8]) {
        var random = TestRandom(seed: seed)
        let data = randomBytes(count, &random)
        let pad = (256 - count % 256) % 256
        return (data, data + [UInt8](repeating: 0, count: pad) + ChunkParity(chunk: data).bytes)
    }

    /// Splits a damaged disk image back into data and parity and repairs it.
    private static func repair(_ disk: [UInt8], dataCount: Int) -> (data: [UInt8], unrepaired: [Int], changed: Int) {
        let parityStart = disk.count - ChunkParity.parityLength
        var data = Array(disk[0..<dataCount])
        var parity = ChunkParity(storedBytes: Array(disk[parityStart...]))
        let result = parity.repair(chunk: &data)
        return (data, result.unrepairedCodewords, result.changedOffsets.count)
    }

    @Test("Any damaged 4 KiB region of a chunk on disk — data, the zeros after it, parity — is repaired",
          arguments: [57_088, 10_000, 1_000, 300])
    func anyFourKiBRegionIsRepaired(count: Int) {
        let (data, disk) = Self.physical(count, seed: UInt64(count))
        var random = TestRandom(seed: 99)
        var starts = Array(stride(from: 0, to: disk.count, by: 256))
        starts += (0..<40).map { _ in Int.random(in: 0..<disk.count, using: &random) }
        var repairedRegions = 0
        for start in starts {
            var damaged = disk
            let end = min(start + 4_096, damaged.count)
            for offset in start..<end { damaged[offset] = start % 3 == 0 ? 0 : UInt8.random(in: 0...255, using: &random) }
            let result = Self.repair(damaged, dataCount: count)
            #expect(result.unrepaired.isEmpty, "region \(start)..<\(end) of \(disk.count): codewords \(result.unrepaired.prefix(5))")
            let repaired = result.data == data
            #expect(repaired, "region \(start)..<\(end) of \(disk.count): first difference at \(zip(result.data, data).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1)")
            repairedRegions += 1
        }
        print("chunk parity: \(repairedRegions) damaged 4 KiB regions of a \(count)-byte chunk repaired")
    }

    @Test("Sixty-four flipped bits at random places in a full chunk are repaired", arguments: 0..<5)
    func scatteredFlipsAreRepaired(trial: Int) {
        let (data, disk) = Self.physical(ChunkParity.dataLength, seed: 7)
        var random = TestRandom(seed: UInt64(100 + trial))
        var damaged = disk
        for _ in 0..<64 {
            let offset = Int.random(in: 0..<damaged.count, using: &random)
            damaged[offset] ^= 1 << UInt8.random(in: 0...7, using: &random)
        }
        let result = Self.repair(damaged, dataCount: ChunkParity.dataLength)
        #expect(result.unrepaired.isEmpty)
        let repaired = result.data == data
        #expect(repaired, "64 flips, trial \(trial)")
    }

    @Test("Seventeen damaged symbols in one codeword are reported and left as they were; the other codewords are repaired")
    func beyondCapacityIsReported() {
        let (data, disk) = Self.physical(ChunkParity.dataLength, seed: 8)
        var damaged = disk
        for symbol in 0..<17 { damaged[symbol * ChunkParity.depth + 5] ^= 0x5A }   // codeword 5
        damaged[3 * ChunkParity.depth + 9] ^= 0x01                                  // and one symbol of codeword 9
        let result = Self.repair(damaged, dataCount: ChunkParity.dataLength)
        #expect(result.unrepaired == [5])
        for symbol in 0..<ChunkParity.dataSymbols {
            let offset = symbol * ChunkParity.depth + 5
            // Left as found: either still damaged or (for symbols 17 and up) never damaged.
            #expect(result.data[offset] == damaged[offset])
        }
        #expect(result.data[3 * ChunkParity.depth + 9] == data[3 * ChunkParity.depth + 9], "codeword 9 repaired")
    }
}
