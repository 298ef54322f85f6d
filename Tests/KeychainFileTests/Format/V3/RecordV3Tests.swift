import Foundation
import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// Version 3's records on their own (Docs/FormatVersion3.md §2.5): segments per group, group chains, heads in every
/// commit — written, read back, and copied by a writer that cannot open them.
@Suite("Format v3: records of group segments, group chains and heads")
struct RecordV3Tests {
    typealias F = RecordV3Fixture

    @Test("Group keys: the labels, file id and key id of §2.5.1, against HKDF and HMAC written out")
    func groupKeys() throws {
        // HKDF with an empty salt and one output block is HMAC(HMAC(zeros, ikm), info ‖ 01): computed here with the
        // library's HMAC only, so a label or key id left out of GroupKeysV3 shows.
        func hkdf(_ ikm: [UInt8], _ info: [UInt8]) -> [UInt8] {
            let prk = Array(HMAC<SHA256>.authenticationCode(for: ikm, using: SymmetricKey(data: [UInt8](repeating: 0, count: 32))))
            return Array(HMAC<SHA256>.authenticationCode(for: info + [1], using: SymmetricKey(data: prk)))
        }
        let ikm = [UInt8](repeating: 0xB2, count: 32)
        let bytes = { (key: SymmetricKey) in key.withUnsafeBytes { Array($0) } }
        #expect(bytes(F.b.pageKey) == hkdf(ikm, Array("KCF3 group page".utf8) + F.fileID + [2]))
        #expect(bytes(F.b.secretKey) == hkdf(ikm, Array("KCF3 group secret".utf8) + F.fileID + [2]))
        #expect(bytes(F.b.startKey) == hkdf(ikm, Array("KCF3 group start".utf8) + F.fileID + [2]))
        let start = Array(HMAC<SHA256>.authenticationCode(for: [0, 0, 0, 0, 0, 0, 0, 9], using: F.b.startKey).prefix(16))
        #expect(F.b.startValue(epoch: 9) == start && F.b.startValue(epoch: 10) != start)
        #expect(throws: KeychainError.self) { _ = try GroupKeysV3(groupKey: F.groupKeyB, fileID: F.fileID, keyID: 0) }
        #expect(throws: KeychainError.self) { _ = try GroupKeysV3(groupKey: SymmetricKey(size: .bits128), fileID: F.fileID, keyID: 3) }
    }

    @Test("Round trip: two groups over several pages, a part and its commit, the next record chaining on; heads as written")
    func roundTrip() throws {
        var random = SplitMix64(seed: 1)
        let keys = F.keys(epoch: 4)
        let entriesA = try RecordV2Tests.entries(300, seed: 11)
        let entriesB = [try F.put(1, secretLength: 100_000, using: &random), .tombstone(id: ItemID(using: &random), time: -5)]
        let pagesA = RecordV3Encoder.pages(entriesA, keys: F.a)
        #expect(pagesA.count > 3)
        let part = try RecordV3Encoder.encode(
            kind: .part, sequence: 1, part: 0, previousChain: F.c0(epoch: 4), segments: pagesA, heads: HeadsV3(), keys: keys, using: &random)
        let commit = try RecordV3Encoder.encode(
            kind: .commit, sequence: 2, part: 1, previousChain: part.chainTag, segments: RecordV3Encoder.pages(entriesB, keys: F.b),
            heads: part.heads, keys: keys, using: &random)
        #expect(commit.heads[1]?.groupSequence == UInt64(pagesA.count) && commit.heads[2]?.groupSequence == 1)
        #expect(commit.heads[1]?.startEpoch == 4 && commit.heads[2]?.startEpoch == 4)
        let log = part.bytes + commit.bytes
        var chains: [UInt8: GroupChainV3] = [1: GroupChainV3(keys: F.a, startEpoch: 4), 2: GroupChainV3(keys: F.b, startEpoch: 4)]
        let one = try RecordV3Decoder.decode(log, at: 0, previousChain: F.c0(epoch: 4), keys: keys, groups: &chains)
        #expect(one.kind == .part && one.heads == nil && one.end == part.bytes.count && one.chainTag == part.chainTag)
        #expect(F.same(F.pages(one).flatMap(\.entries), entriesA, bytes: log, keys: F.a))
        #expect(F.pages(one).map(\.groupSequence) == Array(1...UInt64(pagesA.count)))
        let two = try RecordV3Decoder.decode(log, at: one.end, previousChain: one.chainTag, keys: keys, groups: &chains)
        #expect(two.kind == .commit && two.part == 1 && two.end == log.count && two.heads == commit.heads)
        #expect(F.same(F.pages(two).flatMap(\.entries), entriesB, bytes: log, keys: F.b))
        // The next commit chains on from the heads: a second page of B, a copied-secret put of A.
        guard case .put(let id, let attributes, let box) = F.pages(one)[0].entries[0] else { Issue.record("not a put"); return }
        let copied: [EntryV2] = [.copy(id: id, attributes: attributes, secretBox: Array(log[box]))]
        let next = try RecordV3Encoder.encode(
            kind: .commit, sequence: 3, part: 0, previousChain: commit.chainTag,
            segments: RecordV3Encoder.pages(copied, keys: F.a) + RecordV3Encoder.pages([.delete(id: id, time: 9)], keys: F.b),
            heads: commit.heads, keys: keys, using: &random)
        let three = try RecordV3Decoder.decode(next.bytes, previousChain: two.chainTag, keys: keys, groups: &chains)
        #expect(F.pages(three).map(\.groupSequence) == [UInt64(pagesA.count) + 1, 2])
        #expect(F.same(F.pages(three)[0].entries, copied, bytes: next.bytes, keys: F.a))
        #expect(chains[1]?.sequence == UInt64(pagesA.count) + 1 && chains[2]?.sequence == 2)
        // Out of its place in the log it does not verify.
        #expect(throws: KeychainError.self) { _ = try RecordV3Decoder.decode(next.bytes, previousChain: one.chainTag, keys: keys) }
    }

    @Test("A writer without B's key rewrites into a new epoch, B's segments copied byte for byte: B's holder opens them and verifies B's chain")
    func nonHolderRewrite() throws {
        var random = SplitMix64(seed: 2)
        let old = F.keys(epoch: 1)
        // Epoch 1, written by full holders: A and B, then B alone, then A alone.
        let items = try (0..<6).map { try F.put($0, using: &random) }
        var records: [EncodedRecordV3] = []
        var heads = HeadsV3()
        var chain = F.c0(epoch: 1)
        for (n, segments) in [
            RecordV3Encoder.pages([items[0]], keys: F.a) + RecordV3Encoder.pages([items[1], items[2]], keys: F.b),
            RecordV3Encoder.pages([items[3]], keys: F.b),
            RecordV3Encoder.pages([items[4], .delete(id: ItemID(using: &random), time: 1)], keys: F.a),
        ].enumerated() {
            let record = try RecordV3Encoder.encode(kind: .commit, sequence: UInt64(n + 1), part: 0, previousChain: chain, segments: segments, heads: heads, keys: old, using: &random)
            records.append(record)
            heads = record.heads
            chain = record.chainTag
        }
        // A's holder (scoped to A: follows A, not B) reads epoch 1 and keeps B's segments as bytes.
        var holderA: [UInt8: GroupChainV3] = [1: GroupChainV3(keys: F.a, startEpoch: 1)]
        var copiedB: [OpaqueSegmentV3] = []
        var newest = HeadsV3()
        chain = F.c0(epoch: 1)
        for record in records {
            let decoded = try RecordV3Decoder.decode(record.bytes, previousChain: chain, keys: old, groups: &holderA)
            copiedB += F.opaque(decoded)
            newest = try #require(decoded.heads)
            chain = decoded.chainTag
        }
        #expect(copiedB.count == 2 && copiedB.allSatisfy { $0.keyID == 2 })
        // It rewrites into epoch 2: a new chain key and sequence; A anew (its chain restarts), B copied, B's head kept.
        let new = F.keys(epoch: 2)
        let rewrite = try RecordV3Encoder.encode(
            kind: .commit, sequence: 1, part: 0, previousChain: F.c0(epoch: 2),
            segments: RecordV3Encoder.pages([items[0], items[4]], keys: F.a) + copiedB.map { .copy($0) },
            heads: newest.removing(1), keys: new, using: &random)
        #expect(rewrite.heads[2] == newest[2] && rewrite.heads[1]?.startEpoch == 2)
        // B's holder, scoped to B, opens epoch 2 from B's head's start epoch (1).
        var holderB: [UInt8: GroupChainV3] = [2: GroupChainV3(keys: F.b, startEpoch: try #require(rewrite.heads[2]).startEpoch)]
        let decoded = try RecordV3Decoder.decode(rewrite.bytes, previousChain: F.c0(epoch: 2), keys: new, groups: &holderB)
        let pagesB = F.pages(decoded)
        #expect(pagesB.map(\.groupSequence) == [1, 2])
        #expect(pagesB.map { Array(rewrite.bytes[$0.segment]) } == copiedB.map(\.bytes), "copied byte for byte")
        #expect(F.same(pagesB.flatMap(\.entries), [items[1], items[2], items[3]], bytes: rewrite.bytes, keys: F.b))
        // And the chain verifier, from the segments alone, against the newest heads.
        let verified = try GroupChainV3.verify(keys: F.b, segments: F.opaque(try RecordV3Decoder.decode(rewrite.bytes, previousChain: F.c0(epoch: 2), keys: new)).filter { $0.keyID == 2 }, heads: try #require(decoded.heads))
        #expect(verified.map(\.count) == [2, 1])
        // The old epoch's chain key does not verify the new record: the copy is bound to its new place by K_log only.
        #expect(throws: KeychainError.self) { _ = try RecordV3Decoder.decode(rewrite.bytes, previousChain: F.c0(epoch: 2), keys: old) }
    }

    @Test("A reader without B's key learns of B's segment its key id, its two lengths and its bytes — not how many items it holds")
    func nonHolderView() throws {
        var random = SplitMix64(seed: 3)
        let keys = F.keys(epoch: 1)
        // One put (secret 100 bytes, attributes padded) against two puts (secrets 36 bytes each): the same page
        // length and the same secret boxes' total, so the same segment header.
        let onePut = [try F.put(1, secretLength: 100, generic: 0, using: &random)]
        let twoPuts = [try F.put(2, secretLength: 36, using: &random), try F.put(3, secretLength: 36, using: &random)]
        let pad = twoPuts.reduce(0) { $0 + $1.pageByteCount } - onePut[0].pageByteCount
        let padded = [try F.put(1, secretLength: 100, generic: pad - 7, using: &random)]
        #expect(padded[0].pageByteCount == twoPuts.reduce(0) { $0 + $1.pageByteCount })
        var views: [OpaqueSegmentV3] = []
        for entries in [padded, twoPuts] {
            let record = try RecordV3Encoder.encode(kind: .commit, sequence: 1, part: 0, previousChain: F.c0(epoch: 1),
                                                    segments: RecordV3Encoder.pages(entries, keys: F.b), heads: HeadsV3(), keys: keys, using: &random)
            let decoded = try RecordV3Decoder.decode(record.bytes, previousChain: F.c0(epoch: 1), keys: keys)
            #expect(decoded.segments.count == 1 && F.pages(decoded).isEmpty)
            views += F.opaque(decoded)
        }
        #expect(views.count == 2)
        #expect(views.map(\.keyID) == [2, 2] && views[0].segmentLength == views[1].segmentLength && views[0].pageBoxLength == views[1].pageBoxLength)
        // What the type holds: the bytes, and nothing else.
        #expect(Mirror(reflecting: views[0]).children.map(\.label) == ["bytes"])
        // The heads, which every holder opens, name B's sequence (its page count, which counting segments shows), no items.
        let heads = try RecordV3Decoder.decode(try RecordV3Encoder.encode(
            kind: .commit, sequence: 1, part: 0, previousChain: F.c0(epoch: 1), segments: RecordV3Encoder.pages(twoPuts, keys: F.b),
            heads: HeadsV3(), keys: keys, using: &random).bytes, previousChain: F.c0(epoch: 1), keys: keys).heads
        #expect(heads?.groups.map(\.groupSequence) == [1] && heads?.plaintext.count == GroupHeadV3.byteCount)
    }

    @Test("The encoder refuses what a reader would refuse: a copied segment without its head, a part without segments, keys of another file")
    func encoderRefusals() throws {
        var random = SplitMix64(seed: 4)
        let keys = F.keys(epoch: 1)
        let sealed = try RecordV3Encoder.encode(kind: .commit, sequence: 1, part: 0, previousChain: F.c0(epoch: 1),
                                                segments: RecordV3Encoder.pages([try F.put(1, using: &random)], keys: F.b), heads: HeadsV3(), keys: keys, using: &random)
        let segment = F.opaque(try RecordV3Decoder.decode(sealed.bytes, previousChain: F.c0(epoch: 1), keys: keys))[0]
        #expect(throws: KeychainError.self) {
            _ = try RecordV3Encoder.encode(kind: .commit, sequence: 2, part: 0, previousChain: sealed.chainTag, segments: [.copy(segment)],
                                           heads: HeadsV3(), keys: keys, using: &random)
        }
        #expect(throws: KeychainError.self) {
            _ = try RecordV3Encoder.encode(kind: .part, sequence: 2, part: 0, previousChain: sealed.chainTag, segments: [], heads: sealed.heads, keys: keys, using: &random)
        }
        let other = try GroupKeysV3(groupKey: F.groupKeyA, fileID: [UInt8](repeating: 1, count: 16), keyID: 1)
        #expect(throws: KeychainError.self) {
            _ = try RecordV3Encoder.encode(kind: .commit, sequence: 2, part: 0, previousChain: sealed.chainTag,
                                           segments: RecordV3Encoder.pages([.delete(id: ItemID(using: &random), time: 0)], keys: other), heads: sealed.heads, keys: keys, using: &random)
        }
        #expect(throws: KeychainError.self) { _ = try OpaqueSegmentV3(bytes: F.segment(keyID: 0, page: [UInt8](repeating: 0, count: 28))) }
        #expect(throws: KeychainError.self) { _ = try OpaqueSegmentV3(bytes: segment.bytes + [0]) }
        // A heads-only commit is a record (a commit that writes no page).
        let empty = try RecordV3Encoder.encode(kind: .commit, sequence: 2, part: 0, previousChain: sealed.chainTag, segments: [], heads: sealed.heads, keys: keys, using: &random)
        #expect(try RecordV3Decoder.decode(empty.bytes, previousChain: sealed.chainTag, keys: keys).heads == sealed.heads)
    }
}
