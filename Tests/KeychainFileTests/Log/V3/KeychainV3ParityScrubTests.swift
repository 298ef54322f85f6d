import Foundation
import Testing
@testable import KeychainFile

/// The parity scrub of a version 3 file (SPEC.md §19.5, as version 2's): `checkParity()` finds parity that a torn
/// write or decay spoiled, `repairParity()` rewrites it in place — at version 3's places, which header runs of
/// several pages move — and a credential scoped to access groups, which cannot verify the other groups' bytes, is
/// refused before anything is read or written.
@Suite("Format version 3: the parity scrub")
struct KeychainV3ParityScrubTests {
    /// A compacted version 3 file with two-page header runs (the log starts at file byte 40,960, 8,192 bytes later
    /// than version 2's), whose record fills chunk 0 and part of chunk 1; its items, and the keychain.
    static func file(_ directory: TemporaryDirectory) throws -> (keychain: Keychain, path: String, expected: [String: [UInt8]]) {
        let (keychain, _) = try KeychainV3MultiPageTests.manySlots(in: directory)
        try #require(try V3Keychain.log(keychain).state.pageCount == 2)
        let expected = try V2Keychain.fill(keychain, count: 300, perBatch: 50, secretSize: 200)
        try keychain.compact()
        let logEnd = try V3Keychain.log(keychain).state.log.writtenEnd
        try #require(logEnd > ChunkParity.dataLength && logEnd < 2 * ChunkParity.dataLength, "one complete chunk and a last one")
        return (keychain, directory.file("v3.kcf"), expected)
    }

    /// Chunk 0's data and parity in the file: version 2's places (data from 32,768, parity 89,856 – 98,047), 8,192
    /// bytes later behind runs of two pages.
    static let dataOfChunk0 = 40_960..<98_048
    static let parityOfChunk0 = 98_048..<106_240

    /// `bytes` with the 4 KiB from byte 8,192 of chunk 0 (inside the acknowledged record) zeroed.
    static func withLostSector(_ bytes: [UInt8]) -> [UInt8] {
        var lost = bytes
        for offset in (dataOfChunk0.lowerBound + 8_192)..<(dataOfChunk0.lowerBound + 12_288) { lost[offset] = 0 }
        return lost
    }

    @Test("A complete chunk's parity zeroed behind two-page runs: the check names its file bytes; until it is rewritten a lost sector of that chunk is beyond repair; rewritten in place, the sector is repaired on open")
    func zeroedParityFoundAndRewritten() throws {
        let directory = TemporaryDirectory()
        let (_, path, expected) = try Self.file(directory)
        let pristine = try fileBytes(path)
        var torn = pristine
        #expect(torn[Self.parityOfChunk0].contains { $0 != 0 }, "chunk 0's parity lies where §30.2 puts it")
        for offset in Self.parityOfChunk0 { torn[offset] = 0 }
        try writeFileBytes(torn, to: path)

        let keychain = try V3Keychain.open(path)
        #expect(try liveSecrets(keychain) == expected)
        #expect(keychain.repairs.isEmpty, "an open reads no parity while the records verify")
        let found = try keychain.checkParity()
        #expect(found.checkedChunks == 2, "chunk 0, and the last chunk against the newest slot")
        #expect(!found.rewritten && found.unreadableChunks.isEmpty)
        let stale = try #require(found.staleChunks.first)
        #expect(found.staleChunks.count == 1)
        #expect(stale.chunk == 0 && !stale.isInCommitSlot)
        #expect(stale.dataRange == Self.dataOfChunk0)
        #expect(stale.parityRange == Self.parityOfChunk0)
        #expect(stale.differingBytes == pristine[Self.parityOfChunk0].filter { $0 != 0 }.count)
        #expect("\(found)".contains("file bytes 98048–106239"), "\(found)")
        #expect(try fileBytes(path) == torn, "a check writes nothing")

        // What the scrub is for: with this parity, a lost sector of chunk 0 is not repaired.
        let lostPath = directory.file("lost.kcf")
        try writeFileBytes(Self.withLostSector(torn), to: lostPath)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try V3Keychain.open(lostPath) }

        let rewritten = try keychain.repairParity()
        #expect(rewritten.rewritten && rewritten.staleChunks == found.staleChunks)
        #expect(try fileBytes(path) == pristine, "the parity the chunk had, and nothing else, was written")
        #expect(try keychain.checkParity().isClean)
        #expect(try liveSecrets(keychain) == expected)

        try writeFileBytes(Self.withLostSector(try fileBytes(path)), to: lostPath)
        let repaired = try V3Keychain.open(lostPath)
        #expect(try liveSecrets(repaired) == expected)
        #expect(repaired.repairs.chunks.map(\.chunk) == [0])
    }

    @Test("Parity bytes flipped by decay: the rewrite writes those bytes only, one write each, and syncs once")
    func flippedParityBytes() throws {
        let directory = TemporaryDirectory()
        let (_, path, expected) = try Self.file(directory)
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
        #expect(try liveSecrets(V3Keychain.open(path)) == expected)
    }

    @Test("Records damaged and repaired on open, parity sound: nothing stale; the rewrite puts back the repaired bytes and nothing else")
    func repairedRecordsSoundParity() throws {
        let directory = TemporaryDirectory()
        let (_, path, expected) = try Self.file(directory)
        let pristine = try fileBytes(path)
        var damaged = pristine
        for offset in (Self.dataOfChunk0.lowerBound + 1_000)..<(Self.dataOfChunk0.lowerBound + 1_010) { damaged[offset] ^= 0xFF }
        try writeFileBytes(damaged, to: path)
        let keychain = try V3Keychain.open(path)
        #expect(keychain.repairs.chunks.map(\.chunk) == [0])
        let found = try keychain.checkParity()
        #expect(found.isClean && found.checkedChunks == 2, "\(found)")
        #expect(try fileBytes(path) == damaged, "a check writes nothing")
        let rewritten = try keychain.repairParity()
        #expect(rewritten.isClean && !rewritten.rewritten, "\(rewritten)")
        #expect(try fileBytes(path) == pristine)
        #expect(try liveSecrets(V3Keychain.open(path)) == expected)
    }

    @Test("The last chunk's parity in the newest commit slot, behind two-page runs, decayed: the check names the slot's bytes; the rewrite commits it anew")
    func lastChunkParityInTheSlot() throws {
        let directory = TemporaryDirectory()
        let (_, path, expected) = try Self.file(directory)
        // The commit slots lie at version 2's 4,096 and 16,384, one page later behind two-page runs.
        let counter = try #require(try V3Keychain.log(V3Keychain.open(path)).state.log.newest).seal.counter
        let start = [8_192, 20_480][Int(counter % 2)] + Seal.encodedLength
        let slotParity = start..<(start + ChunkParity.parityLength)
        var decayed = try fileBytes(path)
        for offset in [5, 4_000] { decayed[slotParity.lowerBound + offset] ^= 0x01 }
        try writeFileBytes(decayed, to: path)
        let keychain = try V3Keychain.open(path)
        let found = try keychain.checkParity()
        let stale = try #require(found.staleChunks.first)
        #expect(found.staleChunks.count == 1)
        #expect(stale.chunk == 1 && stale.isInCommitSlot && stale.parityRange == slotParity && stale.differingBytes == 2, "\(found)")
        let rewritten = try keychain.repairParity()
        #expect(rewritten.staleChunks == found.staleChunks)
        #expect(try keychain.checkParity().isClean)
        let reopened = try V3Keychain.open(path)
        #expect(try reopened.checkParity().isClean)
        #expect(try liveSecrets(reopened) == expected)
    }

    @Test("A credential scoped to access groups is refused both, with missingEntitlement, before any copy or write; the full holder then scrubs")
    func scopedHolderRefused() throws {
        let directory = TemporaryDirectory()
        let (_, path) = try KeychainV3ScopedWriteTests.keychain(in: directory)
        let pristine = try fileBytes(path)
        let parityStart = HealingLayout.parityOffset(ofChunk: 0)
        #expect(pristine.count < parityStart, "a file of one chunk: its parity is the newest slot's")
        let viewA = try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedA)
        #expect(throws: KeychainError.missingEntitlement(group: nil, operation: "")) { try viewA.checkParity() }
        let backup = directory.file("backup.kcf")
        #expect(throws: KeychainError.missingEntitlement(group: nil, operation: "")) { try viewA.repairParity(keepingCopyAt: backup) }
        #expect(!FileManager.default.fileExists(atPath: backup), "no copy made for a refused scrub")
        #expect(try fileBytes(path) == pristine)
        let before = try KeychainV3ScopedWriteTests.snapshot(viewA)
        let fullAgain = try V3Keychain.open(path)
        #expect(try fullAgain.checkParity().isClean)
        #expect(try fullAgain.repairParity(keepingCopyAt: backup).isClean)
        #expect(try KeychainV3ScopedWriteTests.snapshot(V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedA)) == before)
    }
}
