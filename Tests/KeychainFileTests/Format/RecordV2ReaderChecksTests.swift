import Foundation
import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// The reader of version 2 records checks what its callers hand it and what a page says as strictly as the
/// writer checks what it writes: ranges outside the bytes, a secret over 1 MiB, a record's own entry count.
@Suite("Format v2: reader checks at every entry point")
struct RecordV2ReaderChecksTests {
    /// The reason of the `.corrupted` error `body` throws; nil if it throws nothing or something else.
    static func corruptedReason(_ body: () throws(KeychainError) -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            if case .corrupted(_, let reason) = error { return reason }
            return nil
        }
    }

    @Test("Offsets and ranges outside the bytes given, or boxes under 28 bytes, are corrupted at every entry point, never a trap or a read past the end")
    func rangesOutsideTheBytes() throws {
        let keys = try RecordV2Tests.keys()
        var random = SplitMix64(seed: 51)
        let entries = try (0..<20).map { n in try RecordV2Tests.put(n, secretLength: 40, using: &random) }
        let record = try RecordV2Encoder.encode(entries, kind: .commit, sequence: 1, part: 0, previousChain: RecordV2Tests.c0, keys: keys, using: &random)
        let bytes = record.bytes
        let scanned = try RecordV2Decoder.scan(bytes, at: 0)
        let page = scanned.pages[0]
        let box = page.secrets[0]
        let shorter = Array(bytes[0..<(page.box.upperBound - 1)])
        guard case .put(let id, _, _) = entries[0] else { return }
        for (name, reason) in [
            ("scan at -1", Self.corruptedReason { () throws(KeychainError) in _ = try RecordV2Decoder.scan(bytes, at: -1) }),
            ("scan past the end", Self.corruptedReason { () throws(KeychainError) in _ = try RecordV2Decoder.scan(bytes, at: bytes.count + 1) }),
            ("openSecret past the end", Self.corruptedReason { () throws(KeychainError) in _ = try RecordV2Decoder.openSecret(box, of: id, in: Array(bytes[0..<(box.upperBound - 1)]), keys: keys) }),
            ("openSecret before the start", Self.corruptedReason { () throws(KeychainError) in _ = try RecordV2Decoder.openSecret(-4..<56, of: id, in: bytes, keys: keys) }),
            ("openSecret under 28 bytes", Self.corruptedReason { () throws(KeychainError) in _ = try RecordV2Decoder.openSecret(box.lowerBound..<(box.lowerBound + 27), of: id, in: bytes, keys: keys) }),
            ("openPage on a shorter read", Self.corruptedReason { () throws(KeychainError) in _ = try RecordV2Decoder.openPage(page, of: scanned, in: shorter, previousChain: RecordV2Tests.c0, keys: keys) }),
            ("verifySecrets past the end", Self.corruptedReason { () throws(KeychainError) in try RecordV2Decoder.verifySecrets([(box, id)], in: Array(bytes[0..<(box.upperBound - 1)]), keys: keys) }),
            ("verifySecrets under 28 bytes", Self.corruptedReason { () throws(KeychainError) in try RecordV2Decoder.verifySecrets([(box.lowerBound..<(box.lowerBound + 20), id)], in: bytes, keys: keys) }),
        ] {
            #expect(reason?.contains("outside") == true, "\(name): \(reason ?? "no corrupted error")")
        }
        // At the very end: nothing to read, which is a truncated frame.
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try RecordV2Decoder.scan(bytes, at: bytes.count) }
        // More than eight boxes at once are checked eight at a time; one bad among them is found.
        let all = scanned.pages.flatMap(\.secrets).enumerated().map { index, range -> (box: Range<Int>, id: ItemID) in
            guard case .put(let id, _, _) = entries[index] else { return (range, id) }
            return (range, id)
        }
        #expect(all.count == 20)
        try RecordV2Decoder.verifySecrets(all, in: bytes, keys: keys)
        var damaged = bytes
        damaged[all[13].box.lowerBound + 20] ^= 1
        do {
            try RecordV2Decoder.verifySecrets(all, in: damaged, keys: keys)
            Issue.record("a damaged secret box among twenty passed")
        } catch {
            guard case .corrupted(let offset, _) = error else { Issue.record("\(error)"); return }
            #expect(offset == all[13].box.lowerBound)
        }
    }

    @Test("A page that authenticates but names a secret over 1 MiB is corrupted, as the writer refuses to write one")
    func secretOverOneMiBRefused() throws {
        let keys = try RecordV2Tests.keys()
        var random = SplitMix64(seed: 52)
        let id = ItemID(using: &random)
        let attributes = try ItemAttributes(itemClass: .genericPassword, values: [
            .service: .string("s"), .creationDate: .date(Date(timeIntervalSince1970: 0)), .modificationDate: .date(Date(timeIntervalSince1970: 0)),
        ])
        for length in [RecordV2.maximumSecretSize, RecordV2.maximumSecretSize + 1] {
            let box = try RecordV2Forgery.sealSecret([UInt8](repeating: 0x33, count: length), id: id, keys: keys, using: &random)
            let entry = RecordV2Forgery.putEntry(id: id, attributes: attributes, secretLength: UInt32(length), digest: Array(RecordV2.secretBoxDigest(box)))
            let record = try RecordV2Forgery.record(
                pages: [([box], [1, 0, 1] + entry)], entryCount: 1, previousChain: RecordV2Tests.c0, keys: keys, using: &random)
            let reason = Self.corruptedReason { () throws(KeychainError) in _ = try RecordV2Decoder.decode(record.bytes, at: 0, previousChain: RecordV2Tests.c0, keys: keys) }
            if length > RecordV2.maximumSecretSize {
                #expect(reason?.contains("at most 1 MiB") == true, "\(reason ?? "decoded")")
            } else {
                #expect(reason == nil, "\(reason ?? "")")
            }
        }
    }

    @Test("The open probe refuses a record whose pages hold another number of entries than it declares, even when the totals agree")
    func probeChecksEachRecordsCount() throws {
        let keys = try RecordV2Tests.keys()
        var random = SplitMix64(seed: 53)
        func deletion() -> [UInt8] { [2] + ItemID(using: &random).bytes + [UInt8](repeating: 0, count: 8) }
        // Record 1 declares one entry and holds two; record 2 declares three and holds two. Four in all, both ways.
        let first = try RecordV2Forgery.record(pages: [([], [1, 0, 2] + deletion() + deletion())], entryCount: 1, previousChain: RecordV2Tests.c0, keys: keys, using: &random)
        let second = try RecordV2Forgery.record(pages: [([], [1, 0, 2] + deletion() + deletion())], entryCount: 3, sequence: 2, previousChain: first.chain, keys: keys, using: &random)
        let probe = OpenProbeV2(bytes: first.bytes + second.bytes, keys: keys, initialChain: RecordV2Tests.c0, itemCount: 4, recordCount: 2)
        for threads in [1, 2] {
            #expect(throws: KeychainError.corrupted(offset: 0, reason: ""), "\(threads) threads") { try probe.open(threads: threads) }
        }
        // Told the truth, the same pages open.
        let honest = try RecordV2Forgery.record(pages: [([], [1, 0, 2] + deletion() + deletion())], entryCount: 2, previousChain: RecordV2Tests.c0, keys: keys, using: &random)
        #expect(try OpenProbeV2(bytes: honest.bytes, keys: keys, initialChain: RecordV2Tests.c0, itemCount: 2, recordCount: 1).open(threads: 2) == 0)
    }
}
