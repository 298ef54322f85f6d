import Foundation
import Testing
@testable import KeychainFile
@_spi(KeychainFileInternals) import KeychainCrypto

// Review of session 46 (items in their access groups, scoped opens), finding 1, failing on the code reviewed
// (591137c..90ce5f8) and passing since parts are cut to at most RecordLogV3.maximumEntriesPerPart entries. Findings 2–4
// are design points, in Docs/FormatVersion3.md §4.

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
