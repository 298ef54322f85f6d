import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

/// The fork check of Docs/FormatVersion2.md §3: a seal counts only if its head is the one the records give at
/// its committed end.
@Suite("Healing: a slot whose head the records contradict")
struct HealingLogForkTests {
    typealias Files = HealingLogTests
    static let key = HealingLogTests.key
    static let chain = HealingLogCuttingTests.chain

    /// Five records committed one by one, each with its own head; the image, and the head the replay computes
    /// at each record's end.
    static func fiveCommits() throws -> (image: [UInt8], heads: [Int: Head], all: [UInt8]) {
        let handle = Files.handle([UInt8](repeating: 0, count: HealingLayout.logStart))
        let log = HealingLog(creating: handle, headerKey: key, epoch: 1)
        var heads: [Int: Head] = [:]
        var all: [UInt8] = []
        for (index, record) in Files.records([350, 2_000, 700, 5_000, 1_200], seed: 41).enumerated() {
            all += record
            try log.append(record, committedEnd: all.count, headSequence: UInt64(index + 1), headChain: chain(index + 1))
            heads[all.count] = Head(epoch: 1, sequence: UInt64(index + 1), chainValue: chain(index + 1))
        }
        return (try Files.bytes(of: handle), heads, all)
    }

    /// `image` with a seal of the same counter and ends as the one in slot place `place`, but head `chain`
    /// (a commit of another history with that counter, which reached the disk late).
    static func forked(_ image: [UInt8], place: Int, headChain: [UInt8]) throws -> [UInt8] {
        let offset = HealingLayout.slotOffsets[place]
        let slot = try #require(CommitSlot.decode(Array(image[offset..<(offset + CommitSlot.length)]), headerKey: key, epoch: 1))
        let seal = Seal(
            epoch: 1, counter: slot.seal.counter, writtenEnd: slot.seal.writtenEnd, committedEnd: slot.seal.committedEnd,
            headSequence: slot.seal.headSequence, headChain: headChain)
        var forked = image
        Files.apply((offset, CommitSlot(seal: seal, parity: slot.parity).encoded(headerKey: key)), to: &forked)
        return forked
    }

    @Test("Heads that match, or that the replay could not compute, change nothing")
    func matchingHeads() throws {
        let (image, heads, all) = try Self.fiveCommits()
        let log = try HealingLog(opening: Files.handle(image), headerKey: Self.key, epoch: 1)
        try log.checkHeads { heads[$0] }
        try log.checkHeads { _ in nil }
        #expect(log.older?.seal.counter == 4 && log.committed?.counter == 5 && log.appendRefusal == nil)
        try log.append([9], committedEnd: all.count + 1, headSequence: 6, headChain: Self.chain(6))
    }

    @Test("An older slot whose head is not the records' is ignored: no older commit, and the newest's write taken to begin at the rewrite end")
    func forkedOlderSlot() throws {
        let (image, heads, all) = try Self.fiveCommits()
        let forked = try Self.forked(image, place: 0, headChain: [UInt8](repeating: 0xDD, count: 16))   // counter 4
        let log = try HealingLog(opening: Files.handle(forked), headerKey: Self.key, epoch: 1)
        #expect(log.older?.seal.counter == 4, "before the check, the forked seal reads")
        try log.checkHeads { heads[$0] }
        #expect(log.older == nil)
        #expect(log.lastWrite == 0..<all.count, "the newest commit's write is taken to begin at the rewrite end")
        #expect(log.appendRefusal == nil)
        try log.append([9], committedEnd: all.count + 1, headSequence: 6, headChain: Self.chain(6))
    }

    @Test("A newest slot whose head is not the records' makes the log refuse appends and the check throw corrupted")
    func forkedNewestSlot() throws {
        let (image, heads, all) = try Self.fiveCommits()
        for (name, head) in [("chain", Head(epoch: 1, sequence: 5, chainValue: [UInt8](repeating: 0xEE, count: 16))),
                             ("sequence", Head(epoch: 1, sequence: 6, chainValue: Self.chain(5))),
                             ("epoch", Head(epoch: 2, sequence: 5, chainValue: Self.chain(5)))] {
            var replayed = heads
            replayed[all.count] = head
            let log = try HealingLog(opening: Files.handle(image), headerKey: Self.key, epoch: 1)
            #expect(throws: KeychainError.corrupted(offset: 0, reason: ""), "another \(name)") { try log.checkHeads { replayed[$0] } }
            #expect(log.appendRefusal == .forkedNewestSlot, "another \(name)")
            #expect(throws: KeychainError.self, "another \(name)") {
                try log.append([9], committedEnd: all.count + 1, headSequence: 6, headChain: Self.chain(6))
            }
        }
    }
}
