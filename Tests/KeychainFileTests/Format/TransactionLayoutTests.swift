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
            #expect(throws: KeychainError.self, "\(sequence)") { try TransactionLayout(records) }
        }
        let fine = [scanned(.commit, part: 0, at: 0), scanned(.part, part: 0, at: 100), scanned(.commit, part: 1, at: 200), scanned(.part, part: 0, at: 300)]
        #expect(try TransactionLayout(fine) == TransactionLayout(committedEnd: 300, undonePart: 300..<400))
        #expect(try TransactionLayout([]) == TransactionLayout(committedEnd: 0, undonePart: nil))
    }

    @Test("A commit whose kind byte was flipped to 'part' below the acknowledged end is damage, never an undone tail")
    func flippedCommitBelowTheAcknowledgedEnd() throws {
        let keys = try RecordV2Tests.keys()
        var random = SplitMix64(seed: 4)
        let one = try RecordV2Encoder.encode(try RecordV2Tests.entries(5), kind: .commit, sequence: 1, part: 0, previousChain: RecordV2Tests.c0, keys: keys, using: &random)
        let two = try RecordV2Encoder.encode(try RecordV2Tests.entries(5, seed: 2), kind: .commit, sequence: 2, part: 0, previousChain: one.chain, keys: keys, using: &random)
        var log = one.bytes + two.bytes
        log[one.bytes.count + 8] = RecordV2.Kind.part.rawValue
        let scans = try Self.scanAll(log)
        // Without a floor the frames alone read as an unfinished transaction...
        #expect(try TransactionLayout(scans).undonePart == one.bytes.count..<log.count)
        // ...but the seal says both records were acknowledged: that is damage to repair or report, not a cut.
        do {
            _ = try TransactionLayout(scans, acknowledgedEnd: log.count)
            Issue.record("an acknowledged record was taken for an undone part")
        } catch {
            guard case .corrupted(let offset, _) = error else { Issue.record("\(error)"); return }
            #expect(offset == one.bytes.count + 8)
        }
        #expect(try TransactionLayout(scans, acknowledgedEnd: one.bytes.count).undonePart == one.bytes.count..<log.count)
    }

    @Test("A part's kind or number altered in its frame is refused when its pages open")
    func partFieldsAuthenticated() throws {
        let keys = try RecordV2Tests.keys()
        var random = SplitMix64(seed: 3)
        let big = try RecordV2Encoder.encodeTransaction(try Self.bigEntries(60), firstSequence: 1, previousChain: RecordV2Tests.c0, keys: keys, using: &random)
        var first = big.records[0]
        first[8] = RecordV2.Kind.commit.rawValue   // a part made to look like a commit
        #expect(throws: KeychainError.self) { try RecordV2Decoder.decode(first, at: 0, previousChain: RecordV2Tests.c0, keys: keys) }
        // The second part opens after the first's chain value as written, and not once its part number is altered.
        let firstChain = try RecordV2Decoder.decode(big.records[0], at: 0, previousChain: RecordV2Tests.c0, keys: keys).chain
        _ = try RecordV2Decoder.decode(big.records[1], at: 0, previousChain: firstChain, keys: keys)
        var second = big.records[1]
        second[20] ^= 1                            // part 1 made part 0
        #expect(throws: KeychainError.self) { try RecordV2Decoder.decode(second, at: 0, previousChain: firstChain, keys: keys) }
    }
}
