import Foundation
import Testing
@testable import KeychainFile

/// A last add whose commit slot reached the disk before its bytes (Docs/FormatVersion2.md §3 rule 4), the file cut
/// inside the log's last chunk: the open rebuilds the add's records from the slot's parity and serves them, and the
/// next write puts them back and goes on — it must not keep refusing with "the last write did not reach the disk
/// whole". Found by the crash trials (KCF_CRASH_FORMAT=2, seed 103529556371056: a compaction killed, the next add
/// failed). When a chunk the last add completed lost its parity instead, the next write computes that parity
/// again from the records, which verified.
@Suite("Format version 2 through Keychain: a last write missing from the end of the file")
struct KeychainV2LastWriteMissingTests {
    /// Version 2 options without automatic compaction (which would rewrite the file these tests shape).
    static var options: Keychain.CreationOptions {
        var options = V2Keychain.options
        options.autoCompaction = .disabled
        return options
    }

    /// Where the log's second chunk starts.
    static let secondChunk = ChunkParity.dataLength

    @Test(
        "The last add began in chunk 0 and its bytes in chunk 1 are lost: opened repaired and reported, the next add succeeds, and everything reads after a reopen",
        arguments: [-3_000, 0, 2_000])
    func lastAddCutInLastChunk(keptOfLastChunk: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v2.kcf")
        let keychain = try Keychain.create(at: path, credential: TestKeychain.password, options: Self.options)
        var expected = try V2Keychain.fill(keychain, count: 20, perBatch: 10, secretSize: 1_000)
        // A secret that takes the log about 4,000 bytes into chunk 1.
        let before = try V2Keychain.log(keychain).end
        let last = [UInt8](repeating: 0x6C, count: Self.secondChunk - before + 4_000)
        try keychain.add(GenericPassword(service: "svc", account: "last", value: last))
        expected["last"] = last
        let written = try V2Keychain.log(keychain).state.log
        try #require(written.lastWrite.lowerBound < Self.secondChunk && written.writtenEnd > Self.secondChunk + 2_000)
        try #require(written.writtenEnd < Self.secondChunk + 8_192, "every codeword of chunk 1 has at most 32 bytes to rebuild")
        // The slot is on disk; the file ends inside chunk 1, at its start, or (-3,000) inside chunk 0's parity.
        let cut = Array(try fileBytes(path)[..<(HealingLayout.physical(Self.secondChunk) + keptOfLastChunk)])
        try writeFileBytes(cut, to: path)

        let opened = try V2Keychain.open(path)
        #expect(try liveSecrets(opened) == expected)
        #expect(try V2Keychain.log(opened).state.log.appendRefusal == .lastWriteMissing)
        #expect(opened.repairs.chunks.map(\.chunk).contains(1), "chunk 1 opened repaired from the slot's parity, and said so")
        try opened.add(GenericPassword(service: "svc", account: "next", password: "after the repair"))
        expected["next"] = Array("after the repair".utf8)
        let end = try V2Keychain.log(opened).state.log.writtenEnd
        #expect(try fileBytes(path).count == HealingLayout.physicalEnd(ofLog: end))

        let reopened = try V2Keychain.open(path)
        #expect(try liveSecrets(reopened) == expected)
        #expect(reopened.repairs.chunks.isEmpty, "the repair was written back")
        #expect(try V2Keychain.log(reopened).state.log.appendRefusal == nil)
        // Chunk 0's parity, which the cut at -3,000 took in part, is whole again: a later damage to chunk 0 repairs.
        #expect(try Self.storedParityMatchesData(ofChunk: 0, in: path), "chunk 0's parity on disk is its data's")
    }

    /// Whether the parity stored after complete chunk `chunk` is the parity of its data as the file holds it.
    static func storedParityMatchesData(ofChunk chunk: Int, in path: String) throws -> Bool {
        let bytes = try fileBytes(path)
        let dataStart = HealingLayout.physical(chunk * ChunkParity.dataLength)
        let parityStart = HealingLayout.parityOffset(ofChunk: chunk)
        guard bytes.count >= parityStart + ChunkParity.parityLength else { return false }
        let data = Array(bytes[dataStart..<(dataStart + ChunkParity.dataLength)])
        return Array(bytes[parityStart..<(parityStart + ChunkParity.parityLength)]) == ChunkParity(chunk: data).bytes
    }

    @Test(
        "The last add lost its final bytes and a codeword of its slot's parity is beyond repair: the repair confirmed in part is written back, the file extended over the zeros it verified, the parity committed; the next add succeeds",
        arguments: [false, true])
    func lastAddCutWithUnrepairedCodeword(endsWithZero: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v2.kcf")
        // A seeded generator: the adds until the log's last byte is (or is not) zero are the same on every run.
        let keychain = try Keychain.create(
            at: path, credential: TestKeychain.password, options: Self.options, random: RandomSource(TestRandom(seed: 77)),
            clock: { Date(timeIntervalSince1970: 1_800_000_000) }, fileSystem: PosixFileSystem())
        var expected = try V2Keychain.fill(keychain, count: 10, perBatch: 5, secretSize: 300)
        // Adds until the log's last byte is zero (or is not), and the last add lies inside the last chunk.
        func shaped(_ log: HealingLog, _ bytes: [UInt8]) -> Bool {
            (bytes.last == 0) == endsWithZero && log.writtenEnd % ChunkParity.dataLength >= log.lastWrite.count
        }
        var adds = 0
        repeat {
            let secret = [UInt8](repeating: UInt8(truncatingIfNeeded: adds), count: 300)
            try keychain.add(GenericPassword(service: "svc", account: "tail\(adds)", value: secret))
            expected["tail\(adds)"] = secret
            adds += 1
        } while try !shaped(V2Keychain.log(keychain).state.log, fileBytes(path)) && adds < 3_000
        let bytes = try fileBytes(path)
        let log = try V2Keychain.log(keychain).state.log
        try #require(shaped(log, bytes), "\(adds) adds")
        let inChunk = log.writtenEnd % ChunkParity.dataLength
        try #require(log.lastWrite.count > 160)

        // The last 100 bytes lost; 17 parity symbols of a codeword that holds none of them, but bytes of the last
        // add, damaged in its slot: more than parity corrects.
        var damaged = Array(bytes.dropLast(100))
        let codeword = (inChunk - 150) % ChunkParity.depth
        let place = Int(try #require(log.committed).counter % 2)
        for symbol in 0..<17 {
            damaged[HealingLayout.slotOffsets[place] + Seal.encodedLength + symbol * ChunkParity.depth + codeword] ^= 0x5A
        }
        try writeFileBytes(damaged, to: path)

        let opened = try V2Keychain.open(path)
        #expect(try liveSecrets(opened) == expected)
        let openedLog = try V2Keychain.log(opened).state.log
        #expect(openedLog.appendRefusal == .lastWriteMissing)
        let lastChunk = log.writtenEnd / ChunkParity.dataLength
        #expect(opened.repairs.chunks.map(\.chunk) == [lastChunk], "the bytes it rebuilt, reported")
        let proposal = try openedLog.repair(chunk: lastChunk)
        #expect(proposal.unrepairedCodewords == [codeword], "the repair is confirmed only in part")
        try opened.add(GenericPassword(service: "svc", account: "next", password: "after the repair"))
        expected["next"] = Array("after the repair".utf8)

        let reopened = try V2Keychain.open(path)
        #expect(try liveSecrets(reopened) == expected)
        let reopenedLog = try V2Keychain.log(reopened).state.log
        #expect(reopenedLog.appendRefusal == nil, "the last chunk matches its slot's parity")
        let check = try reopenedLog.repair(chunk: reopenedLog.writtenEnd / ChunkParity.dataLength)
        #expect(check.unrepairedCodewords.isEmpty && check.changedOffsets.isEmpty, "the parity committed is the verified bytes'")
    }

    @Test(
        "The last add ended chunk 0 and the file lost part of that chunk's parity: every item reads, and the next add puts the parity back from the records that verified and goes on",
        arguments: [3_000, ChunkParity.parityLength])
    func lastAddEndingChunkWithParityCut(lost: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v2.kcf")
        let keychain = try Keychain.create(at: path, credential: TestKeychain.password, options: Self.options)
        var expected = try V2Keychain.fill(keychain, count: 10, perBatch: 10, secretSize: 500)
        // A record's length is its secret's plus a fixed overhead: a probe measures it, then the last add ends the
        // log exactly where chunk 0 does.
        let beforeProbe = try V2Keychain.log(keychain).end
        try keychain.add(GenericPassword(service: "svc", account: "probe", value: [UInt8](repeating: 0x70, count: 1_000)))
        expected["probe"] = [UInt8](repeating: 0x70, count: 1_000)
        let afterProbe = try V2Keychain.log(keychain).end
        let overhead = afterProbe - beforeProbe - 1_000
        let last = [UInt8](repeating: 0x6C, count: Self.secondChunk - afterProbe - overhead)
        try keychain.add(GenericPassword(service: "svc", account: "final", value: last))
        expected["final"] = last
        try #require(try V2Keychain.log(keychain).state.log.writtenEnd == Self.secondChunk)

        // The slot reached the disk; the end of chunk 0's parity (or all of it) did not.
        let cut = Array(try fileBytes(path).dropLast(lost))
        try writeFileBytes(cut, to: path)
        let opened = try V2Keychain.open(path)
        #expect(try liveSecrets(opened) == expected, "every record reads as written")
        #expect(try V2Keychain.log(opened).state.log.appendRefusal == .lastWriteMissing)
        // The records verified up to the written end, so the parity is recomputed from them before the add.
        try opened.add(GenericPassword(service: "svc", account: "next", password: "x"))
        expected["next"] = Array("x".utf8)
        #expect(try Self.storedParityMatchesData(ofChunk: 0, in: path), "chunk 0's parity on disk is its data's")

        let reopened = try V2Keychain.open(path)
        #expect(try liveSecrets(reopened) == expected)
        #expect(try V2Keychain.log(reopened).state.log.appendRefusal == nil)
        #expect(reopened.repairs.chunks.isEmpty)

        // The parity put back repairs chunk 0: a zeroed 4 KiB sector in it opens repaired, nothing lost.
        var damaged = try fileBytes(path)
        let sector = HealingLayout.physical(20_000) / 4_096 * 4_096
        for offset in sector..<(sector + 4_096) { damaged[offset] = 0 }
        try writeFileBytes(damaged, to: path)
        let repaired = try V2Keychain.open(path)
        #expect(try liveSecrets(repaired) == expected)
        #expect(repaired.repairs.chunks.map(\.chunk) == [0])
    }
}
