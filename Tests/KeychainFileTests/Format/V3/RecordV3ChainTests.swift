import Foundation
import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// A writer that holds the log key and group A's key, not B's, rewrites the log with B's segments dropped, repeated,
/// reordered or put back from older ones. Its records are well formed and its chain tags valid (it has `K_log`);
/// B's holder catches it by B's chain, naming key id 2 (Docs/FormatVersion3.md §2.5).
@Suite("Format v3: group chains catch a writer without the group's key")
struct RecordV3ChainTests {
    typealias F = RecordV3Fixture

    /// Epoch 1, written by a full holder: four commits, each with a page of B (the fourth updates B's first item)
    /// and some with a page of A. Returns what A's holder keeps of it: B's four segments and the newest heads.
    static func historyOfB() throws -> (segments: [OpaqueSegmentV3], heads: HeadsV3) {
        var random = SplitMix64(seed: 31)
        let keys = F.keys(epoch: 1)
        let first = try F.put(1, using: &random)
        guard case .put(let id, let attributes, _) = first else { throw F.corrupted }
        let pagesB: [[EntryV2]] = [
            [first], [try F.put(2, using: &random)], [.delete(id: ItemID(using: &random), time: 4)],
            [.put(id: id, attributes: attributes, secret: [UInt8](repeating: 0x55, count: 24))],
        ]
        var heads = HeadsV3()
        var chain = F.c0(epoch: 1)
        var holderA: [UInt8: GroupChainV3] = [1: GroupChainV3(keys: F.a, startEpoch: 1)]
        var kept: [OpaqueSegmentV3] = []
        var newest = HeadsV3()
        for (n, entries) in pagesB.enumerated() {
            let segmentsA = n % 2 == 0 ? RecordV3Encoder.pages([try F.put(10 + n, using: &random)], keys: F.a) : []
            let record = try RecordV3Encoder.encode(
                kind: .commit, sequence: UInt64(n + 1), part: 0, previousChain: chain,
                segments: segmentsA + RecordV3Encoder.pages(entries, keys: F.b), heads: heads, keys: keys, using: &random)
            heads = record.heads
            let decoded = try RecordV3Decoder.decode(record.bytes, previousChain: chain, keys: keys, groups: &holderA)
            kept += F.opaque(decoded)
            guard let stated = decoded.heads else { throw F.corrupted }
            newest = stated
            chain = decoded.chainTag
        }
        return (kept, newest)
    }

    /// A's holder's rewrite into epoch 2: A anew, then B's segments in `order` (0-based), then the heads, with B's head
    /// as given; two records (a part and a commit) when `split`.
    static func rewrite(_ segments: [OpaqueSegmentV3], order: [Int], heads: HeadsV3, split: Bool = false) throws -> [[UInt8]] {
        var random = SplitMix64(seed: 32)
        let keys = F.keys(epoch: 2)
        let all: [SegmentInputV3] = RecordV3Encoder.pages([try F.put(20, using: &random)], keys: F.a) + order.map { .copy(segments[$0]) }
        let cut = split ? all.count / 2 : all.count
        var records: [[UInt8]] = []
        var chain = F.c0(epoch: 2)
        var running = heads.removing(1)
        if cut < all.count {
            let part = try RecordV3Encoder.encode(kind: .part, sequence: 1, part: 0, previousChain: chain, segments: Array(all[..<cut]),
                                                  heads: running, keys: keys, using: &random)
            records.append(part.bytes)
            chain = part.chainTag
            running = part.heads
        }
        let commit = try RecordV3Encoder.encode(kind: .commit, sequence: UInt64(records.count + 1), part: UInt32(records.count), previousChain: chain,
                                                segments: Array(all[(cut < all.count ? cut : 0)...]), heads: running, keys: keys, using: &random)
        records.append(commit.bytes)
        return records
    }

    /// B's holder reads the rewritten log; the refusal, or nil when every record verifies.
    static func readAsB(_ records: [[UInt8]], startEpoch: UInt64 = 1) -> (offset: Int, reason: String)? {
        let keys = F.keys(epoch: 2)
        var chains: [UInt8: GroupChainV3] = [2: GroupChainV3(keys: F.b, startEpoch: startEpoch)]
        var chain = F.c0(epoch: 2)
        return F.refusal { () throws(KeychainError) in
            for record in records {
                chain = try RecordV3Decoder.decode(record, previousChain: chain, keys: keys, groups: &chains).chainTag
            }
        }
    }

    @Test("As copied, in order, B's chain verifies; so it does when the rewrite is in parts")
    func honestRewrite() throws {
        let (segments, heads) = try Self.historyOfB()
        #expect(segments.count == 4)
        #expect(Self.readAsB(try Self.rewrite(segments, order: [0, 1, 2, 3], heads: heads)) == nil)
        #expect(Self.readAsB(try Self.rewrite(segments, order: [0, 1, 2, 3], heads: heads, split: true)) == nil)
        #expect(try GroupChainV3.verify(keys: F.b, segments: segments, heads: heads).count == 4)
    }

    @Test("Dropped, repeated, reordered or older B pages: caught by B's holder, naming key id 2", arguments: [
        ("a page dropped", [0, 2, 3]),
        ("the first page dropped", [1, 2, 3]),
        ("the last page dropped, its head kept", [0, 1, 2]),
        ("every page dropped, the head kept", []),
        ("a page repeated", [0, 1, 1, 2, 3]),
        ("pages reordered", [0, 2, 1, 3]),
        ("the newest page replaced by an older one", [0, 1, 2, 0]),
        ("an older page put back after the newest", [0, 1, 2, 3, 1]),
    ])
    func caught(_ attack: String, order: [Int]) throws {
        let (segments, heads) = try Self.historyOfB()
        for split in [false, true] where !(split && order.isEmpty) {
            let refusal = Self.readAsB(try Self.rewrite(segments, order: order, heads: heads, split: split))
            #expect(refusal?.reason.contains("group 2") == true, "\(attack), split \(split): \(String(describing: refusal))")
        }
        let verified = F.refusal { () throws(KeychainError) in _ = try GroupChainV3.verify(keys: F.b, segments: order.map { segments[$0] }, heads: heads) }
        #expect(verified?.reason.contains("group 2") == true, "\(attack): \(String(describing: verified))")
    }

    @Test("A chain begun anew under another start epoch, or B's head stepped on past its pages, is caught")
    func startAndHeadForgeries() throws {
        let (segments, heads) = try Self.historyOfB()
        let head = try #require(heads[2])
        // The writer claims B's chain began in epoch 2 (its own rewrite's): page 1 does not open there.
        #expect(Self.readAsB(try Self.rewrite(segments, order: [0, 1, 2, 3], heads: heads), startEpoch: 2)?.reason.contains("group 2") == true)
        let restarted = heads.setting(GroupHeadV3(keyID: 2, startEpoch: 2, groupSequence: 4, lastTag: head.lastTag))
        #expect(F.refusal { () throws(KeychainError) in _ = try GroupChainV3.verify(keys: F.b, segments: segments, heads: restarted) }?.reason.contains("group 2") == true)
        // A head that names one more page, or another tag, than the segments hold.
        let ahead = heads.setting(GroupHeadV3(keyID: 2, startEpoch: 1, groupSequence: 5, lastTag: head.lastTag))
        #expect(Self.readAsB(try Self.rewrite(segments, order: [0, 1, 2, 3], heads: ahead))?.reason.contains("group 2") == true)
        let otherTag = heads.setting(GroupHeadV3(keyID: 2, startEpoch: 1, groupSequence: 4, lastTag: [UInt8](repeating: 1, count: 16)))
        #expect(Self.readAsB(try Self.rewrite(segments, order: [0, 1, 2, 3], heads: otherTag))?.reason.contains("group 2") == true)
        // Pages without a head: a writer that dropped B's head but kept its pages (the encoder refuses to, so forge the
        // heads as such a writer would).
        #expect(F.refusal { () throws(KeychainError) in _ = try GroupChainV3.verify(keys: F.b, segments: segments, heads: heads.removing(2)) }?.reason.contains("group 2") == true)
    }

    @Test("What B's chain cannot catch (§2.5's last bullet): B's last page dropped with B's head stepped back to the page before")
    func rollbackOfOneGroupIsNotCaught() throws {
        let (segments, heads) = try Self.historyOfB()
        // Page 3's tag is in the segment's bytes, which the writer holds: it can make the head of B's state after page 3.
        let tag3 = Array(segments[2].bytes.suffix(from: RecordV3.segmentHeaderSize + segments[2].pageBoxLength - 16).prefix(16))
        let steppedBack = heads.setting(GroupHeadV3(keyID: 2, startEpoch: 1, groupSequence: 3, lastTag: tag3))
        #expect(Self.readAsB(try Self.rewrite(segments, order: [0, 1, 2], heads: steppedBack)) == nil)
        #expect(try GroupChainV3.verify(keys: F.b, segments: Array(segments.prefix(3)), heads: steppedBack).count == 3)
    }
}
