import Foundation
import Testing
@testable import KeychainFile

/// One flipped bit anywhere after the header costs at most the one item whose box it hits, and never changes
/// anything silently (SPEC.md §9.3, §17). For every flip, on the small fixtures and on a compacted file of
/// 1,000 items (where one record holds every item):
///
/// - the normal open, with the lock file's acknowledgement of the unflipped file, fails or gives exactly the
///   unflipped state;
/// - the recovering read serves only items identical to the unflipped state's (an item listed that the file
///   deleted must come with a reported unreadable deletion), and reports every item it does not serve.
///
/// Each run prints, per file, how many flips lost how many items.
/// Format version 1, whatever the default: the tests check bits flipped across version 1's records, which version 2's parity would mend.
@Suite("Reliability: one flipped bit costs at most the item it hits")
struct RecoverySweepTests {
    typealias Pair = TamperingTests.ReplayedState.Pair

    struct Tally {
        var flips = 0
        /// Flips by the number of items the recovering read lost.
        var byLoss: [Int: Int] = [:]
        var strictFailed = 0
        var strictUnchanged = 0
        var restored = 0
        var problems: [String] = []

        var summary: String {
            let losses = byLoss.keys.sorted().map { "\($0) lost: \(byLoss[$0]!)" }.joined(separator: ", ")
            return "\(flips) flips; recovering read: \(losses); normal open: \(strictFailed) failed, \(strictUnchanged) unchanged"
                + (restored > 0 ? "; \(restored) restoring a damaged record" : "")
        }
    }

    /// Sweeps the flips `flips` (offset, bit) of `bytes`, all after the header.
    static func sweep(_ bytes: [UInt8], headerLength: Int, credential: Credential, flips: [(Int, Int)]) throws -> Tally {
        let replayer = try TamperingTests.Replayer(bytes, headerLength: headerLength, credential: credential)
        guard case .opened(let baseline, let baselineTail, let baselineSequence) = replayer.replay(bytes) else {
            throw TestSupportError.unexpectedFixture("the unflipped file does not replay")
        }
        let acknowledgedEnd = baselineTail?.offset ?? bytes.count
        let records = recordOffsets(of: Array(bytes[0..<acknowledgedEnd]))
        let chain = records.last.map { Array(bytes[($0.upperBound - 16)..<$0.upperBound]) }
            ?? FileHeader.initialChainValue(of: replayer.headerBytes)
        let acknowledgement = Acknowledgement(
            fileID: replayer.context.fileID, head: Head(epoch: replayer.context.epoch, sequence: baselineSequence, chainValue: chain),
            end: acknowledgedEnd)

        var tally = Tally()
        var flipped = bytes
        for (offset, bit) in flips {
            flipped[offset] ^= UInt8(1) << bit
            defer { flipped[offset] ^= UInt8(1) << bit }
            tally.flips += 1
            let place = "flip at \(offset) bit \(bit)"

            // The normal open: an error, or exactly the unflipped state.
            let file = MemoryFile(inode: 1)
            file.bytes = flipped
            var replay = Replay(
                file: MemoryFileHandle(file: file, path: "/memory/flipped.kcf"), fileSize: flipped.count, start: headerLength,
                context: replayer.context, initialChain: FileHeader.initialChainValue(of: replayer.headerBytes),
                acknowledged: acknowledgement)
            do throws(KeychainError) {
                try replay.run()
                if TamperingTests.ReplayedState(replay.index) == baseline && replay.head.sequence == baselineSequence {
                    tally.strictUnchanged += 1
                } else if let baselineTail, offset >= baselineTail.offset, offset < baselineTail.offset + Format.frameHeaderSize,
                          replay.tornTail == nil, replay.head.sequence == baselineSequence + 1 {
                    // The fixture whose final record was torn by a flipped length: flipping it back makes the record
                    // whole, and it verifies (TamperingTests counts the same flip).
                    tally.restored += 1
                    continue
                } else {
                    tally.problems.append("\(place): the normal open gave another state (SILENT CHANGE)")
                }
            } catch {
                tally.strictFailed += 1
            }

            // The recovering read.
            var reader = RecoveringReader(
                bytes: flipped, headerLength: headerLength, context: replayer.context,
                initialChain: FileHeader.initialChainValue(of: replayer.headerBytes), acknowledged: acknowledgement)
            reader.run()
            let served = TamperingTests.ReplayedState(reader.index).items
            let reportedIDs = Set(reader.damage.compactMap(\.itemID))
            let unreadableDeletions = reader.damage.filter { $0.loss == .deletion }.count
            let anonymousLosses = reader.damage.filter { ($0.loss == .item && $0.itemID == nil) || $0.loss.isRegion }.count
            var resurrected = 0
            for (id, pair) in served {
                if let original = baseline.items[id] {
                    if original != pair { tally.problems.append("\(place): item \(id) served changed (SILENT CHANGE)") }
                } else {
                    resurrected += 1
                }
            }
            if resurrected > unreadableDeletions {
                tally.problems.append("\(place): \(resurrected) items served that the file does not hold, \(unreadableDeletions) deletions reported unreadable")
            }
            let lost = baseline.items.keys.filter { served[$0] == nil }
            let unreported = lost.filter { !reportedIDs.contains($0) }
            if unreported.count > anonymousLosses {
                tally.problems.append("\(place): \(unreported.count) items lost without a report")
            }
            tally.byLoss[lost.count, default: 0] += 1
        }
        return tally
    }

    /// Every flip after the header.
    static func allFlips(_ bytes: [UInt8], headerLength: Int) -> [(Int, Int)] {
        (headerLength..<bytes.count).flatMap { offset in (0..<8).map { (offset, $0) } }
    }

    @Test("Every flip after the header of a small fixture costs at most one item, and changes nothing silently",
          arguments: TamperingTests.swept)
    func smallFixture(name: String) throws {
        let fixture = try FixtureManifest(name)
        let headerLength = try #require(fixture.headerLength)
        let tally = try Self.sweep(
            fixture.bytes, headerLength: headerLength, credential: fixture.credential,
            flips: Self.allFlips(fixture.bytes, headerLength: headerLength))
        print("recovery sweep: \(name): \(tally.summary)")
        for problem in tally.problems.prefix(10) { Issue.record("\(name): \(problem)") }
        #expect(tally.byLoss.keys.allSatisfy { $0 <= 1 }, "\(name): \(tally.summary)")
    }

    @Test("Flips across a compacted file of 1,000 items, whose one record holds every item, cost at most one item each")
    func compactedThousand() throws {
        let directory = TemporaryDirectory()
        let path = try AcknowledgementTests.compactedKeychain(directory, count: 1_000)
        let bytes = try fileBytes(path)
        let headerLength = try #require(recordOffsets(of: bytes).first?.lowerBound)
        // Every bit of the frame header and first entries, and of the last entries and final tag; 1,500 flips
        // drawn (seeded) from everything between.
        var flips = Self.allFlips(Array(bytes[0..<(headerLength + 320)]), headerLength: headerLength)
        flips += ((bytes.count - 320)..<bytes.count).flatMap { offset in (0..<8).map { (offset, $0) } }
        var random = TestRandom(seed: 0x5EED_F11B)
        for _ in 0..<1_500 {
            flips.append((Int.random(in: (headerLength + 320)..<(bytes.count - 320), using: &random), Int.random(in: 0..<8, using: &random)))
        }
        let tally = try Self.sweep(bytes, headerLength: headerLength, credential: TestKeychain.password, flips: flips)
        print("recovery sweep: compacted 1,000 items (\(bytes.count) bytes): \(tally.summary)")
        for problem in tally.problems.prefix(10) { Issue.record("\(problem)") }
        #expect(tally.byLoss.keys.allSatisfy { $0 <= 1 }, "\(tally.summary)")
        #expect(tally.strictUnchanged == 0, "every flip after the header of a compacted file is detected")
    }
}

extension Damage.Loss {
    var isRegion: Bool {
        if case .region = self { return true }
        return false
    }
}
