import Foundation
import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// Transactions of any size in version 2: a batch too large for one record is written as parts and a commit,
/// applied all together; a trailing one without its commit is undone, at any point it was cut.
@Suite("Format v2: transactions in parts")
struct TransactionLayoutTests {
    static func bigEntries(_ count: Int) throws -> [EntryV2] {
        var random = SplitMix64(seed: 77)
        return try (0..<count).map { n in try RecordV2Tests.put(n, secretLength: 600_000, using: &random) }
    }

    static func scanAll(_ log: [UInt8]) throws -> [RecordV2Decoder.Scanned] {
        var records: [RecordV2Decoder.Scanned] = []
        var offset = 0
        while offset < log.count {
            let record = try RecordV2Decoder.scan(log, at: offset)
            records.append(record)
            offset = record.end
        }
        return records
    }

    @Test("A 36 MB transaction is written as parts and a commit, and decodes to every entry in order")
    func largeTransactionInParts() throws {
        let keys = try RecordV2Tests.keys()
        var random = SplitMix64(seed: 1)
        let entries = try Self.bigEntries(60)
        let written = try RecordV2Encoder.encodeTransaction(entries, firstSequence: 1, previousChain: RecordV2Tests.c0, keys: keys, using: &random)
        #expect(written.records.count >= 3)
        let log = written.records.reduce([], +)
        let scans = try Self.scanAll(log)
        #expect(scans.map(\.part) == Array(0..<UInt32(scans.count)))
        #expect(scans.dropLast().allSatisfy { $0.kind == .part } && scans.last?.kind == .commit)
        #expect(try TransactionLayout(scans) == TransactionLayout(committedEnd: log.count, undonePart: nil))
        var decoded: [DecodedEntryV2] = []
        var chain = RecordV2Tests.c0
        var offset = 0
        while offset < log.count {
            let record = try RecordV2Decoder.decode(log, at: offset, previousChain: chain, keys: keys)
            decoded += record.entries
            chain = record.chain
            offset = record.end
        }
        #expect(chain == written.chain)
        try RecordV2Tests.check(decoded, against: entries, bytes: log, keys: keys)
    }

    @Test("Cut after any record, or inside any record, of a transaction in parts: nothing of it is committed")
    func cutAnywhereUndoesTheWhole() throws {
        let keys = try RecordV2Tests.keys()
        var random = SplitMix64(seed: 2)
        let before = try RecordV2Encoder.encode(try RecordV2Tests.entries(5), kind: .commit, sequence: 1, part: 0, previousChain: RecordV2Tests.c0, keys: keys, using: &random)
        let big = try RecordV2Encoder.encodeTransaction(try Self.bigEntries(60), firstSequence: 2, previousChain: before.chain, keys: keys, using: &random)
        let log = before.bytes + big.records.reduce([], +)
        var ends: [Int] = []
        var position = before.bytes.count
        for record in big.records { position += record.count; ends.append(position) }
        // After each whole record but the commit: the parts are an undone tail.
        for end in ends.dropLast() {
            let layout = try TransactionLayout(try Self.scanAll(Array(log[0..<end])))
            #expect(layout.committedEnd == before.bytes.count)
            #expect(layout.undonePart == before.bytes.count..<end)
        }
        // Inside the commit record: its frame does not fit, so the whole records before it are what is left.
        let cutInCommit = ends[ends.count - 2] + 1_000
        #expect(throws: KeychainError.self) { try RecordV2Decoder.scan(Array(log[0..<cutInCommit]), at: ends[ends.count - 2]) }
        let layout = try TransactionLayout(try Self.scanAll(Array(log[0..<ends[ends.count - 2]])))
        #expect(layout.committedEnd == before.bytes.count)
        // Whole: committed.
        #expect(try TransactionLayout(try Self.scanAll(log)).committedEnd == log.count)
    }

    @Test("Parts out of order, a part with nothing before it, or an open transaction followed by another are corrupted")
    func malformedSequencesRefused() throws {
        func scanned(_ kind: RecordV2.Kind, part: UInt32, at start: Int) -> RecordV2Decoder.Scanned {
            RecordV2Decoder.Scanned(start: start, end: start + 100, kind: kind, sequence: UInt64(start / 100 + 1), part: part, entryCount: 1, boxCount: 1, pages: [])
        }
        let refused: [[(RecordV2.Kind, UInt32)]] = [
            [(.part, 1)],                          // a part with nothing before it
            [(.part, 0), (.part, 2)],              // a part skipped
            [(.part, 0), (.commit, 0)],            // an open transaction, then another record
            [(.commit, 1)],                        // a commit of part 1 alone
            [(.part, 0), (.part, 1), (.commit, 1)],
        ]
        for sequence in refused {
            let records = sequence.enumerated().map { scanned($1.0, part: $1.1, at: $0 * 100) }
            #expect(throws: KeychainError.corrupted(offset: 0, reason: ""), "\(sequence)") { try TransactionLayout(records) }
        }
        // Records not contiguous (a gap, an overlap, out of order) or sequence numbers not consecutive.
        let commit = { (start: Int, end: Int, sequence: UInt64) in
            RecordV2Decoder.Scanned(start: start, end: end, kind: .commit, sequence: sequence, part: 0, entryCount: 1, boxCount: 1, pages: [])
        }
        let misplaced: [[RecordV2Decoder.Scanned]] = [
            [commit(0, 100, 1), commit(150, 250, 2)],
            [commit(0, 100, 1), commit(50, 150, 2)],
            [commit(100, 200, 2), commit(0, 100, 1)],
            [commit(0, 100, 1), commit(100, 200, 3)],
            [commit(0, 100, 1), commit(100, 200, 1)],
            [commit(0, 100, .max), commit(100, 200, 0)],
            [commit(10, 100, 1)],
            [commit(0, 0, 1)],
        ]
        for records in misplaced {
            #expect(throws: KeychainError.corrupted(offset: 0, reason: ""), "\(records.map { ($0.start, $0.end, $0.sequence) })") {
                try TransactionLayout(records)
            }
        }
        // An acknowledged end inside a record, or at the end of a part that a commit follows.
        let parts = [scanned(.part, part: 0, at: 0), scanned(.commit, part: 1, at: 100)]
        for acknowledged in [50, 100, 150] {
            #expect(throws: KeychainError.corrupted(offset: 0, reason: ""), "\(acknowledged)") { try TransactionLayout(parts, acknowledgedEnd: acknowledged) }
        }
        #expect(try TransactionLayout(parts, acknowledgedEnd: 200).committedEnd == 200)
        let fine = [scanned(.commit, part: 0, at: 0), scanned(.part, part: 0, at: 100), scanned(.commit, part: 1, at: 200), scanned(.part, part: 0, at: 300)]
        #expect(try TransactionLayout(fine) == TransactionLayout(committedEnd: 300, undonePart: 300..<400))
        #expect(try TransactionLayout([]) == TransactionLayout(committedEnd: 0, undonePart: nil))
    }

    /// Three commit records of five entries each, and where each starts.
    static func threeCommits(seed: UInt64) throws -> (log: [UInt8], starts: [Int]) {
        let keys = try RecordV2Tests.keys()
        var random = SplitMix64(seed: seed)
        var log: [UInt8] = []
        var starts: [Int] = []
        var chain = RecordV2Tests.c0
        for sequence in 1...3 {
            let record = try RecordV2Encoder.encode(
                try RecordV2Tests.entries(5, seed: UInt64(sequence)), kind: .commit, sequence: UInt64(sequence), part: 0,
                previousChain: chain, keys: keys, using: &random)
            starts.append(log.count)
            log += record.bytes
            chain = record.chain
        }
        return (log, starts)
    }

    @Test("Bit 1 of a commit's kind byte flipped (commit reads as part), last in the log or mid-log: the scan refuses that record, and only it")
    func flippedKindCaughtByTheFrameCheck() throws {
        let (log, starts) = try Self.threeCommits(seed: 4)
        for damaged in [2, 1] {
            var bytes = log
            bytes[starts[damaged] + 8] ^= 0b10
            #expect(bytes[starts[damaged] + 8] == RecordV2.Kind.part.rawValue)
            for (index, start) in starts.enumerated() {
                if index == damaged {
                    do {
                        _ = try RecordV2Decoder.scan(bytes, at: start)
                        Issue.record("record \(index): a flipped kind byte passed the scan")
                    } catch {
                        guard case .corrupted(let offset, let reason) = error else { Issue.record("\(error)"); continue }
                        #expect(offset == start && reason.contains("frame check"), "record \(index): \(error)")
                    }
                } else {
                    // The records around it are intact, and the scan reaches them: its length still holds.
                    #expect(try RecordV2Decoder.scan(bytes, at: start).kind == .commit, "record \(index)")
                }
            }
        }
    }

    @Test("A commit whose frame says 'part' below the acknowledged end is damage at that record, never an undone tail")
    func flippedCommitBelowTheAcknowledgedEnd() throws {
        let (log, starts) = try Self.threeCommits(seed: 5)
        // The last commit's kind flipped, and its frame check recomputed (a writer's bug: the check is unkeyed).
        var last = log
        last[starts[2] + 8] = RecordV2.Kind.part.rawValue
        RecordV2Forgery.refreshFrameCheck(&last, at: starts[2])
        let scans = try Self.scanAll(last)
        // Without a floor the frames alone read as an unfinished transaction...
        #expect(try TransactionLayout(scans).undonePart == starts[2]..<log.count)
        // ...but the seal says every record was acknowledged: that is damage to repair or report, not a cut.
        for acknowledged in [log.count + 100, log.count, log.count - 1, starts[2] + 1] {
            do {
                let layout = try TransactionLayout(scans, acknowledgedEnd: acknowledged)
                Issue.record("acknowledged end \(acknowledged): \(layout)")
            } catch {
                guard case .corrupted(let offset, _) = error else { Issue.record("\(error)"); continue }
                #expect(offset == starts[2] + 8, "acknowledged end \(acknowledged)")
            }
        }
        // A floor at or below its start leaves it a tail the next writer cuts.
        #expect(try TransactionLayout(scans, acknowledgedEnd: starts[2]).undonePart == starts[2]..<log.count)
        // Mid-log: refused, and never an undone part, whatever the floor.
        var middle = log
        middle[starts[1] + 8] = RecordV2.Kind.part.rawValue
        RecordV2Forgery.refreshFrameCheck(&middle, at: starts[1])
        let middleScans = try Self.scanAll(middle)
        for acknowledged in [0, starts[2], log.count] {
            do {
                let layout = try TransactionLayout(middleScans, acknowledgedEnd: acknowledged)
                Issue.record("acknowledged end \(acknowledged): \(layout)")
            } catch {
                guard case .corrupted(let offset, _) = error else { Issue.record("\(error)"); continue }
                #expect((starts[1]..<log.count).contains(offset), "acknowledged end \(acknowledged): offset \(offset)")
            }
        }
    }

    @Test("A part's kind or number altered in its frame is refused when its pages open")
    func partFieldsAuthenticated() throws {
        let keys = try RecordV2Tests.keys()
        var random = SplitMix64(seed: 3)
        let big = try RecordV2Encoder.encodeTransaction(try Self.bigEntries(60), firstSequence: 1, previousChain: RecordV2Tests.c0, keys: keys, using: &random)
        // Each change comes with its frame check recomputed, so that only the pages' authentication can refuse it.
        var first = big.records[0]
        first[8] = RecordV2.Kind.commit.rawValue   // a part made to look like a commit
        RecordV2Forgery.refreshFrameCheck(&first)
        let firstPage = try RecordV2Decoder.scan(first, at: 0).pages[0].box.lowerBound
        let kindRefusal = RecordV2Tests.refusal(first, keys: keys)
        #expect(kindRefusal?.offset == firstPage && kindRefusal?.reason.contains("does not authenticate") == true, "\(String(describing: kindRefusal))")
        // The second part opens after the first's chain value as written, and not once its part number is altered.
        let firstChain = try RecordV2Decoder.decode(big.records[0], at: 0, previousChain: RecordV2Tests.c0, keys: keys).chain
        _ = try RecordV2Decoder.decode(big.records[1], at: 0, previousChain: firstChain, keys: keys)
        var second = big.records[1]
        second[20] ^= 1                            // part 1 made part 0
        RecordV2Forgery.refreshFrameCheck(&second)
        let partRefusal = RecordV2Tests.refusal(second, previousChain: firstChain, keys: keys)
        #expect(partRefusal?.offset == (try RecordV2Decoder.scan(second, at: 0).pages[0].box.lowerBound) && partRefusal?.reason.contains("does not authenticate") == true, "\(String(describing: partRefusal))")
    }
}
