import Foundation
import Testing
@testable import KeychainFile

/// The parity scrub (SPEC §19.5): an open never reads parity while the records verify, so parity that a torn
/// write or decay spoiled is found only by `checkParity()`, and rewritten in place by `repairParity()` — before
/// a second fault in its chunk needs it.
@Suite("Format version 2: the parity scrub")
struct KeychainV2ParityScrubTests {
    /// A compacted version 2 file of 300 items whose records fill chunk 0 and part of chunk 1, and its items.
    static func file(_ directory: TemporaryDirectory) throws -> (path: String, expected: [String: [UInt8]]) {
        let keychain = try V2Keychain.create(in: directory)
        let expected = try V2Keychain.fill(keychain, count: 300, perBatch: 50, secretSize: 200)
        try keychain.compact()
        let logEnd = try V2Keychain.log(keychain).state.log.writtenEnd
        #expect(logEnd > ChunkParity.dataLength && logEnd < 2 * ChunkParity.dataLength, "one complete chunk and a last one")
        return (directory.file("v2.kcf"), expected)
    }

    /// Where chunk 0's parity lies in the file.
    static let parityOfChunk0 = HealingLayout.parityOffset(ofChunk: 0)..<(HealingLayout.parityOffset(ofChunk: 0) + ChunkParity.parityLength)

    /// `bytes` with the 4 KiB of file bytes from log byte 8,192 of chunk 0 (inside an acknowledged record) zeroed.
    static func withLostSector(_ bytes: [UInt8]) -> [UInt8] {
        var lost = bytes
        let start = HealingLayout.physical(8_192)
        for offset in start..<(start + 4_096) { lost[offset] = 0 }
        return lost
    }

    @Test("A complete chunk's parity zeroed by a torn write: the check names it; until it is rewritten a lost sector of that chunk is beyond repair; rewritten in place, the same sector is repaired on open")
    func zeroedParityFoundAndRewritten() throws {
        let directory = TemporaryDirectory()
        let (path, expected) = try Self.file(directory)
        let pristine = try fileBytes(path)
        var torn = pristine
        for offset in Self.parityOfChunk0 { torn[offset] = 0 }
        try writeFileBytes(torn, to: path)

        // The open reads no parity while the records verify: every item, nothing reported.
        let keychain = try V2Keychain.open(path)
        #expect(try liveSecrets(keychain) == expected)
        #expect(keychain.repairs.isEmpty)
        let found = try keychain.checkParity()
        #expect(found.checkedChunks == 2, "chunk 0, and the last chunk against the newest slot")
        #expect(!found.rewritten && found.unreadableChunks.isEmpty)
        let stale = try #require(found.staleChunks.first)
        #expect(found.staleChunks.count == 1)
        #expect(stale.chunk == 0 && !stale.isInCommitSlot)
        #expect(stale.dataRange == HealingLayout.logStart..<(HealingLayout.logStart + ChunkParity.dataLength))
        #expect(stale.parityRange == Self.parityOfChunk0)
        #expect(stale.differingBytes == pristine[Self.parityOfChunk0].filter { $0 != 0 }.count)
        #expect("\(found)".contains("file bytes 89856–98047"), "\(found)")
        #expect(try fileBytes(path) == torn, "a check writes nothing")

        // What the scrub is for: with this parity, a lost sector of chunk 0 is not repaired.
        let lostPath = directory.file("lost.kcf")
        try writeFileBytes(Self.withLostSector(torn), to: lostPath)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try V2Keychain.open(lostPath) }

        let rewritten = try keychain.repairParity()
        #expect(rewritten.rewritten && rewritten.staleChunks == found.staleChunks)
        #expect(try fileBytes(path) == pristine, "the parity the chunk had, and nothing else, was written")
        #expect(try keychain.checkParity().isClean)
        #expect(try liveSecrets(keychain) == expected)

        try writeFileBytes(Self.withLostSector(try fileBytes(path)), to: lostPath)
        let repaired = try V2Keychain.open(lostPath)
        #expect(try liveSecrets(repaired) == expected)
        #expect(repaired.repairs.chunks.map(\.chunk) == [0])
    }

    @Test("Parity bytes flipped by decay: the check counts them; the rewrite writes those bytes only, one write each, and syncs once")
    func flippedParityBytes() throws {
        let directory = TemporaryDirectory()
        let (path, expected) = try Self.file(directory)
        let pristine = try fileBytes(path)
        var decayed = pristine
        for offset in [17, 3_000, 8_000] { decayed[Self.parityOfChunk0.lowerBound + offset] ^= 0x20 }
        try writeFileBytes(decayed, to: path)
        let faulty = FaultyFileSystem()
        let keychain = try Keychain.openForTesting(at: path, fileSystem: faulty)
        let found = try keychain.checkParity()
        #expect(found.staleChunks.map(\.chunk) == [0])
        #expect(found.staleChunks.first?.differingBytes == 3)
        faulty.resetCounts()
        let rewritten = try keychain.repairParity()
        #expect(rewritten.staleChunks.map(\.differingBytes) == [3])
        #expect(faulty.calls(of: .write) == 3, "one write per differing byte")
        #expect(faulty.calls(of: .sync) == 1)
        #expect(try fileBytes(path) == pristine)
        #expect(try liveSecrets(V2Keychain.open(path)) == expected)
    }

    @Test("Parity that matches: the check reports every chunk compared and nothing stale; the rewrite writes nothing")
    func soundParity() throws {
        let directory = TemporaryDirectory()
        let (path, _) = try Self.file(directory)
        let pristine = try fileBytes(path)
        let faulty = FaultyFileSystem()
        let keychain = try Keychain.openForTesting(at: path, fileSystem: faulty)
        let found = try keychain.checkParity()
        #expect(found.isClean && found.staleChunks.isEmpty && found.checkedChunks == 2, "\(found)")
        faulty.resetCounts()
        let rewritten = try keychain.repairParity()
        #expect(!rewritten.rewritten && rewritten.isClean)
        #expect(faulty.calls(of: .write) == 0 && faulty.calls(of: .sync) == 0)
        #expect(try fileBytes(path) == pristine)
    }

    @Test("Records damaged and repaired on open, parity sound: the check compares with the records as verified and finds nothing stale; the rewrite puts back the repaired bytes and nothing else")
    func repairedRecordsSoundParity() throws {
        let directory = TemporaryDirectory()
        let (path, expected) = try Self.file(directory)
        let pristine = try fileBytes(path)
        var damaged = pristine
        for logical in 1_000..<1_010 { damaged[HealingLayout.physical(logical)] ^= 0xFF }
        try writeFileBytes(damaged, to: path)
        let keychain = try V2Keychain.open(path)
        #expect(keychain.repairs.chunks.map(\.chunk) == [0])
        let found = try keychain.checkParity()
        #expect(found.isClean && found.checkedChunks == 2, "\(found)")
        #expect(try fileBytes(path) == damaged, "a check writes nothing")
        let rewritten = try keychain.repairParity()
        #expect(rewritten.isClean && !rewritten.rewritten, "\(rewritten)")
        #expect(try fileBytes(path) == pristine)
        #expect(try liveSecrets(V2Keychain.open(path)) == expected)
    }

    @Test("The last chunk's parity in the newest commit slot, decayed: the check names the slot's bytes; the rewrite commits it anew")
    func lastChunkParityInTheSlot() throws {
        let directory = TemporaryDirectory()
        let (path, expected) = try Self.file(directory)
        let slotParity: Range<Int> = try {
            let log = try V2Keychain.log(V2Keychain.open(path)).state.log
            let start = HealingLayout.slotOffsets[Int(try #require(log.newest).seal.counter % 2)] + Seal.encodedLength
            return start..<(start + ChunkParity.parityLength)
        }()
        var decayed = try fileBytes(path)
        for offset in [5, 4_000] { decayed[slotParity.lowerBound + offset] ^= 0x01 }
        try writeFileBytes(decayed, to: path)
        let keychain = try V2Keychain.open(path)
        let found = try keychain.checkParity()
        let stale = try #require(found.staleChunks.first)
        #expect(found.staleChunks.count == 1)
        #expect(stale.chunk == 1 && stale.isInCommitSlot && stale.parityRange == slotParity && stale.differingBytes == 2)
        let rewritten = try keychain.repairParity()
        #expect(rewritten.staleChunks == found.staleChunks)
        #expect(try keychain.checkParity().isClean)
        let reopened = try V2Keychain.open(path)
        #expect(try reopened.checkParity().isClean)
        #expect(try liveSecrets(reopened) == expected)
    }

    @Test("A version 1 file has no parity: nothing compared; a keychain opened with recovery does not compare")
    func nothingToCompare() throws {
        let directory = TemporaryDirectory()
        let v1 = try TestKeychain.create(in: directory, formatVersion: 1)
        try v1.setPassword("one", forService: "s", account: "a")
        #expect(try v1.checkParity() == ParityReport.none)
        #expect(try v1.repairParity() == ParityReport.none)
        let (path, _) = try Self.file(directory)
        let recovering = try Keychain.open(at: path, credential: TestKeychain.password, options: Keychain.OpenOptions(recover: true))
        #expect(throws: KeychainError.invalidParameter("")) { try recovering.checkParity() }
    }
}
