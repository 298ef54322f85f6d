import Foundation
import Testing
@testable import KeychainFile
@_spi(KeychainFileInternals) import KeychainCrypto

// Review of session 46 (items in their access groups, scoped opens), finding 1, failing on the code reviewed
// (591137c..90ce5f8) and passing since parts are cut to at most RecordLogV3.maximumEntriesPerPart entries; and finding 2,
// passing since session 48 pads pages. Findings 3 and 4 are design points, in Docs/FormatVersion3.md §4.

/// Finding 1. A version 3 append splits a batch into transaction parts by version 2's byte estimate
/// (`RecordLogV2.partRanges`), which knows nothing of segments; §2.11 starts a new segment at every change of group
/// (and a move adds a deletion in the old group's page before the put), so a batch whose entries alternate between
/// groups makes one segment per entry. Past 65,535 segments in one part the encoder throws `limitReached` ("a larger
/// transaction is written in parts") and nobody splits it: a batch that version 2, or one group, writes is refused.
/// (The estimate does not count each extra segment's ~40 bytes of header, page box and page header either; whether
/// that alone can pass 16 MiB in one part is not tested here.)
@Suite("Review S46 finding 1: a batch whose entries alternate between groups is refused past 65,535 segments")
struct ReviewS46SegmentsPerPartTests {
    static let groupA = KeychainV3GroupTests.groupA

    @Test("A batch of 66,000 adds alternating between the default group and A is written, in parts if need be")
    func alternatingAdds() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        // Both groups exist first, so that the batch below adds no group (no rewrite).
        try KeychainV3GroupTests.add(keychain, group: Self.groupA, count: 1)
        let count = 66_000
        var failure: String? = nil
        do throws(KeychainError) {
            try keychain.batch { (batch) throws(KeychainError) in
                for number in 0..<count {
                    try batch.add(GenericPassword(
                        service: "alternating", account: "item-\(number)", accessGroup: number % 2 == 0 ? "" : Self.groupA,
                        value: [UInt8(truncatingIfNeeded: number)]))
                }
            }
        } catch {
            failure = "\(error)"
        }
        #expect(failure == nil, "the batch was refused: \(failure ?? "")")
        #expect(keychain.count == count + 1)
        let reopened = try V3Keychain.open(path)
        #expect(reopened.count == count + 1)
    }

    @Test("Moving 33,000 items of one service from group A to the default group, in one update, is written")
    func movingManyItems() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        let count = 33_000
        // One group's adds: one run of pages, written without trouble.
        try keychain.batch { (batch) throws(KeychainError) in
            for number in 0..<count {
                try batch.add(GenericPassword(service: "bulk", account: "item-\(number)", accessGroup: Self.groupA, value: [1, 2, 3]))
            }
        }
        #expect(keychain.count == count)
        // Each move is a deletion in A's page then a put in the default group's: 66,000 segments in one part.
        var failure: String? = nil
        do throws(KeychainError) {
            _ = try keychain.update(.genericPassword(service: "bulk"), setting: [.accessGroup: .string("")])
        } catch {
            failure = "\(error)"
        }
        #expect(failure == nil, "the move was refused: \(failure ?? "")")
        let reopened = try V3Keychain.open(path)
        let moved = try reopened.search(Query(.genericPassword, limit: .all), returning: .attributes)
        #expect(moved.count == count)
        #expect(moved.allSatisfy { ($0.attributes?.string(.accessGroup) ?? "") == "" })
    }
}


/// Finding 2. §2.3 (and ``OpaqueSegmentV3``'s documentation) promise that a holder without `K_B` cannot tell how many
/// items, entries or deletions a segment of group B holds. Pages are not padded, and a deletion or tombstone entry is
/// a fixed 25 bytes, so a page box of deletions alone is exactly 31 + 25·n bytes and its segment has no secret bytes
/// (S = P): anyone holding `K_log` — every scoped credential — reads off how many of B's items each commit deleted
/// (a move out of B shows as one), and from S > P that a commit put items in B. Failing on the code reviewed, and
/// passing since session 48, whose pages are padded to size classes (``GroupPageV3/paddedLength(_:)``).
@Suite("Review S46 finding 2: a scoped holder counts another group's deletions from its segments' lengths")
struct ReviewS46DeletionCountTests {
    /// Each record's segments that `log` (a scoped holder's) cannot open, as it walks the file with its own keys.
    static func opaqueSegmentsByRecord(path: String, log: RecordLogV3) throws -> [[OpaqueSegmentV3]] {
        let bytes = try fileBytes(path)
        var groups = log.state.groups.byKeyID.mapValues { GroupChainV3(keys: $0, startEpoch: log.state.keys.startEpoch(of: $0.keyID)) }
        var offset = HeaderRunV3.logStart(pageCount: log.state.pageCount)
        var chain = log.state.header.initialChainValue(headerKey: log.state.logKeys.header)
        var records: [[OpaqueSegmentV3]] = []
        while offset < HeaderRunV3.logStart(pageCount: log.state.pageCount) + log.end {
            let record = try RecordV3Decoder.decode(bytes, at: offset, previousChain: chain, keys: log.state.keys, groups: &groups)
            records.append(record.segments.compactMap { (segment) -> OpaqueSegmentV3? in
                if case .opaque(let opaque) = segment { return opaque } else { return nil }
            })
            chain = record.chainTag
            offset = record.end
        }
        return records
    }

    @Test("A commit deleting one of B's items and one deleting three give B segments of the same length to A's holder")
    func deletionCountHidden() throws {
        let directory = TemporaryDirectory()
        let (full, path, _) = try KeychainV3ScopedTests.keychain(in: directory)
        let groupB = KeychainV3GroupTests.groupB
        let keyB = try #require(try V3Keychain.log(full).state.groups.keyID(named: groupB))
        // Two commits of the full holder: one deletion in B, then three.
        _ = try full.delete(.genericPassword(service: "svc", account: "\(groupB)-0"))
        try full.batch { (batch) throws(KeychainError) in
            for number in 1...3 { _ = try batch.delete(.genericPassword(service: "svc", account: "\(groupB)-\(number)")) }
        }
        // What group A's holder, with K_log and K_A alone, has of those two commits.
        let scoped = try V3Keychain.open(path, credential: KeychainV3ScopedTests.scoped)
        let log = try V3Keychain.log(scoped)
        #expect(log.state.groups.byKeyID[keyB] == nil)
        let records = try Self.opaqueSegmentsByRecord(path: path, log: log)
        try #require(records.count >= 2)
        let one = try #require(records[records.count - 2].first { $0.keyID == keyB })
        let three = try #require(records[records.count - 1].first { $0.keyID == keyB })
        // The count A's holder derives: (P − 12 nonce − 16 tag − 3 page header) / 25, with no secret bytes (S = P).
        let derived = [one, three].map { $0.segmentLength == $0.pageBoxLength ? ($0.pageBoxLength - 31) / 25 : -1 }
        #expect(one.pageBoxLength == three.pageBoxLength && one.segmentLength == three.segmentLength,
                "B's segments tell A's holder how many of B's items each commit deleted: \(derived)")
    }
}
