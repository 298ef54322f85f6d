import Foundation
import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// Version 3 records damaged or malformed: every flipped bit and every truncation refused, and every rule of the
/// frame, the segments' lengths and the heads' placement enforced with a typed error at its offset in the record.
@Suite("Format v3: damaged and malformed records are refused")
struct RecordV3DamageTests {
    typealias F = RecordV3Fixture

    /// A commit of epoch 1, sequence 5: A's page (one put), B's page (a put and a deletion), and the heads.
    static func small() throws -> (bytes: [UInt8], keys: RecordKeysV3, previous: [UInt8]) {
        var random = SplitMix64(seed: 21)
        let keys = F.keys(epoch: 1)
        let previous = F.c0(epoch: 1)
        let record = try RecordV3Encoder.encode(
            kind: .commit, sequence: 5, part: 0, previousChain: previous,
            segments: RecordV3Encoder.pages([try F.put(1, secretLength: 8, using: &random)], keys: F.a)
                + RecordV3Encoder.pages([try F.put(2, secretLength: 5, using: &random), .delete(id: ItemID(using: &random), time: 3)], keys: F.b),
            heads: HeadsV3(), keys: keys, using: &random)
        return (record.bytes, keys, previous)
    }

    static func chains() -> [UInt8: GroupChainV3] {
        [1: GroupChainV3(keys: F.a, startEpoch: 1), 2: GroupChainV3(keys: F.b, startEpoch: 1)]
    }

    @Test("Every flipped bit is refused by a holder of both groups, counted by what caught it")
    func everyBitRefused() throws {
        let (bytes, keys, previous) = try Self.small()
        var caughtBy: [String: Int] = [:]
        var accepted: [Int] = []
        for bit in 0..<(bytes.count * 8) {
            var damaged = bytes
            damaged[bit / 8] ^= UInt8(1 << (bit % 8))
            var chains = Self.chains()
            do {
                _ = try RecordV3Decoder.decode(damaged, previousChain: previous, keys: keys, groups: &chains)
                accepted.append(bit)
            } catch {
                guard case .corrupted(_, let reason) = error else { caughtBy["other: \(error)", default: 0] += 1; continue }
                let what = ["frame check", "chain tag", "heads", "page does not authenticate", "secret box", "length check", "body length",
                            "segment count", "bytes between", "segment"].first { reason.contains($0) } ?? reason
                caughtBy[what, default: 0] += 1
            }
        }
        #expect(accepted.isEmpty, "bits accepted, the first: \(Array(accepted.prefix(20)))")
        #expect(caughtBy.values.reduce(0, +) == bytes.count * 8, "\(caughtBy)")
        // The frame and headers by the frame check (or a length before it), the page tags and chain tag by the chain
        // tag, the ciphertexts and nonces by GCM (pages, heads and secret boxes).
        for what in ["frame check", "chain tag", "heads", "page does not authenticate", "secret box"] {
            #expect((caughtBy[what] ?? 0) > 0, "\(what): \(caughtBy)")
        }
        print("RecordV3DamageTests: \(bytes.count * 8) bits of a \(bytes.count)-byte record, refused by: \(caughtBy.sorted { $0.key < $1.key })")
    }

    @Test("A reader without B's key refuses every flipped bit except those inside B's page ciphertext and nonce and its secret boxes (§2.5: only K_B's holders can tell)")
    func nonHolderSeesAllButBsCiphertext() throws {
        let (bytes, keys, previous) = try Self.small()
        let scanned = try RecordV3Decoder.scan(bytes)
        let b = scanned.segments[1]
        #expect(b.keyID == 2)
        let blind = Set((b.pageBox.lowerBound..<(b.pageBox.upperBound - 16)).map { $0 }).union(b.secrets)
        var accepted = Set<Int>()
        for bit in 0..<(bytes.count * 8) {
            var damaged = bytes
            damaged[bit / 8] ^= UInt8(1 << (bit % 8))
            var chains: [UInt8: GroupChainV3] = [1: GroupChainV3(keys: F.a, startEpoch: 1)]
            if (try? RecordV3Decoder.decode(damaged, previousChain: previous, keys: keys, groups: &chains)) != nil { accepted.insert(bit / 8) }
        }
        #expect(accepted == blind, "accepted \(accepted.sorted()) against \(blind.sorted())")
    }

    @Test("Every truncation is refused; bytes after the record are not read")
    func everyTruncationRefused() throws {
        let (bytes, keys, previous) = try Self.small()
        var accepted: [Int] = []
        for count in 0..<bytes.count {
            var chains = Self.chains()
            if F.refusal({ () throws(KeychainError) in _ = try RecordV3Decoder.decode(Array(bytes[..<count]), previousChain: previous, keys: keys, groups: &chains) }) == nil {
                accepted.append(count)
            }
        }
        #expect(accepted.isEmpty, "\(accepted)")
        var chains = Self.chains()
        let followed = try RecordV3Decoder.decode([0xEE] + bytes + [0xFF, 0x00], at: 1, previousChain: previous, keys: keys, groups: &chains)
        #expect(followed.end == bytes.count + 1)
    }

    /// The refusal of `segments` assembled into a record with a valid frame check and chain tag (a writer that holds
    /// the log key but breaks the rules).
    static func refusalOf(kind: UInt8 = 1, segments: [[UInt8]], keys: RecordKeysV3, count: Int? = nil) -> (offset: Int, reason: String)? {
        var bytes = RecordV3Encoder.assemble(kind: kind, sequence: 1, part: 0, segments: segments, previousChain: F.c0(epoch: 1), chainKey: keys.chainKey)
        if let count {
            bytes[21] = UInt8(count >> 8)
            bytes[22] = UInt8(count & 0xFF)
            var headers: [Range<Int>] = []
            var at = 27
            for segment in segments {
                headers.append(at..<(at + 9))
                at += segment.count
            }
            bytes = F.refreshingFrameCheck(bytes, segmentHeaders: headers)
        }
        return F.refusal { () throws(KeychainError) in _ = try RecordV3Decoder.decode(bytes, previousChain: F.c0(epoch: 1), keys: keys) }
    }

    @Test("Malformed frames and placements, each with a valid frame check and chain tag, are corrupted at their offset")
    func malformed() throws {
        var random = SplitMix64(seed: 22)
        let keys = F.keys(epoch: 1)
        let record = try RecordV3Encoder.encode(kind: .commit, sequence: 1, part: 0, previousChain: F.c0(epoch: 1),
                                                segments: RecordV3Encoder.pages([try F.put(1, using: &random)], keys: F.b), heads: HeadsV3(), keys: keys, using: &random)
        let scanned = try RecordV3Decoder.scan(record.bytes)
        let pageB = Array(record.bytes[scanned.segments[0].range])
        let heads = Array(record.bytes[scanned.segments[1].range])
        let emptyHeads = try F.headsSegment([], keys: keys, sequence: 1)
        // As written, it is a record.
        #expect(Self.refusalOf(segments: [pageB, heads], keys: keys) == nil)

        let cases: [(String, (offset: Int, reason: String)?, Int, String)] = [
            ("zero segments", Self.refusalOf(segments: [pageB, heads], keys: keys, count: 0), 21, "segment count 0"),
            ("one segment counted too many", Self.refusalOf(segments: [pageB, heads], keys: keys, count: 3), 27 + pageB.count + heads.count, "runs past"),
            ("one segment counted too few", Self.refusalOf(segments: [pageB, heads], keys: keys, count: 1), 27 + pageB.count, "bytes between"),
            ("a segment length past the end", Self.refusalOf(segments: [F.segment(keyID: 2, page: Array(pageB[9...]), length: 1_000_000), heads], keys: keys), 28, "run"),
            ("a page box longer than its segment", Self.refusalOf(segments: [F.segment(keyID: 2, page: Array(pageB[9...]), pageLength: pageB.count - 8), heads], keys: keys), 28, "page box length"),
            ("a page box shorter than a box", Self.refusalOf(segments: [F.segment(keyID: 2, page: Array(pageB[9...]), pageLength: 27), heads], keys: keys), 28, "page box length"),
            ("a commit without heads", Self.refusalOf(segments: [pageB], keys: keys), 27, "heads segment"),
            ("two heads", Self.refusalOf(segments: [pageB, emptyHeads, heads], keys: keys), 27 + pageB.count, "has 2"),
            ("a key id 0 segment before a group's", Self.refusalOf(segments: [emptyHeads, pageB, heads], keys: keys), 27, "has 2"),
            ("the heads first", Self.refusalOf(segments: [heads, pageB], keys: keys), 27, "has 1, at segments [0]"),
            ("heads in a part", Self.refusalOf(kind: 3, segments: [pageB, heads], keys: keys), 27 + pageB.count, "part holds a heads"),
            ("a heads segment with bytes after its box", Self.refusalOf(segments: [pageB, F.segment(keyID: 0, page: Array(heads[9...]), secrets: [0])], keys: keys), 27 + pageB.count + 1, "after its box"),
            ("a group segment the heads do not name", Self.refusalOf(segments: [pageB, emptyHeads], keys: keys), 27, "do not name"),
        ]
        for (name, refusal, offset, reason) in cases {
            #expect(refusal?.offset == offset && refusal?.reason.contains(reason) == true, "\(name): \(String(describing: refusal))")
        }
        // Another kind, in a frame whose check passes, is a newer writer's.
        let kind7 = RecordV3Encoder.assemble(kind: 7, sequence: 1, part: 0, segments: [pageB], previousChain: F.c0(epoch: 1), chainKey: keys.chainKey)
        do {
            _ = try RecordV3Decoder.scan(kind7)
            Issue.record("kind 7 was read")
        } catch {
            guard case .unsupportedFeature(let offset, let reason) = error else { Issue.record("\(error)"); return }
            #expect(offset == 8 && reason.contains("kind 7"), "\(error)")
        }
    }

    @Test("Heads that authenticate but do not hold together are corrupted: order, page 0, a start epoch to come, a partial head")
    func malformedHeads() throws {
        let keys = F.keys(epoch: 3)
        func head(_ keyID: UInt8, start: UInt64, sequence: UInt64) -> [UInt8] {
            var writer = ByteWriter()
            writer.writeUInt8(keyID)
            writer.writeUInt64(start)
            writer.writeUInt64(sequence)
            writer.writeBytes([UInt8](repeating: 7, count: 16))
            return writer.bytes
        }
        func refusal(_ plaintext: [UInt8]) throws -> String? {
            let bytes = RecordV3Encoder.assemble(kind: 1, sequence: 1, part: 0, segments: [try F.headsSegment(plaintext, keys: keys, sequence: 1)],
                                                 previousChain: F.c0(epoch: 3), chainKey: keys.chainKey)
            return F.refusal { () throws(KeychainError) in _ = try RecordV3Decoder.decode(bytes, previousChain: F.c0(epoch: 3), keys: keys) }?.reason
        }
        #expect(try refusal(head(1, start: 3, sequence: 1) + head(2, start: 1, sequence: 9)) == nil)
        #expect(try refusal(head(2, start: 3, sequence: 1) + head(1, start: 1, sequence: 9))?.contains("out of order") == true)
        #expect(try refusal(head(2, start: 3, sequence: 1) + head(2, start: 1, sequence: 9))?.contains("out of order") == true)
        #expect(try refusal(head(0, start: 3, sequence: 1))?.contains("out of order") == true)
        // Group sequence 0 is a group without a page, its tag the start value (§35.7): the heads hold together; a
        // reader that follows the group checks the tag against its chain.
        #expect(try refusal(head(1, start: 3, sequence: 0)) == nil)
        #expect(try refusal(head(1, start: 4, sequence: 1))?.contains("after this one") == true)
        #expect(try refusal(Array(head(1, start: 3, sequence: 1).dropLast()))?.contains("multiple of 33") == true)
        // Sealed for another record sequence, or under another key, they do not authenticate.
        let moved = RecordV3Encoder.assemble(kind: 1, sequence: 2, part: 0, segments: [try F.headsSegment([], keys: keys, sequence: 1)],
                                             previousChain: F.c0(epoch: 3), chainKey: keys.chainKey)
        #expect(F.refusal { () throws(KeychainError) in _ = try RecordV3Decoder.decode(moved, previousChain: F.c0(epoch: 3), keys: keys) }?.reason.contains("heads do not authenticate") == true)
    }

    @Test("A segment moved from one record to another, the frame check made anew (no key needed), breaks the chain tag")
    func movedSegmentBreaksChainTag() throws {
        var random = SplitMix64(seed: 23)
        let keys = F.keys(epoch: 1)
        let first = try RecordV3Encoder.encode(kind: .part, sequence: 1, part: 0, previousChain: F.c0(epoch: 1),
                                               segments: RecordV3Encoder.pages([try F.put(1, using: &random)], keys: F.a), heads: HeadsV3(), keys: keys, using: &random)
        let second = try RecordV3Encoder.encode(kind: .commit, sequence: 2, part: 1, previousChain: first.chainTag,
                                                segments: RecordV3Encoder.pages([try F.put(2, using: &random)], keys: F.a)
                                                    + RecordV3Encoder.pages([try F.put(3, using: &random)], keys: F.b),
                                                heads: first.heads, keys: keys, using: &random)
        let one = try RecordV3Decoder.scan(first.bytes), two = try RecordV3Decoder.scan(second.bytes)
        // B's segment moved into the part: each record keeps its old chain tag (whoever moves it has no chain key).
        let segments1 = [Array(first.bytes[one.segments[0].range]), Array(second.bytes[two.segments[1].range])]
        let segments2 = [Array(second.bytes[two.segments[0].range]), Array(second.bytes[two.segments[2].range])]
        let wrongKey = SymmetricKey(data: [UInt8](repeating: 0x99, count: 32))
        var moved1 = RecordV3Encoder.assemble(kind: 3, sequence: 1, part: 0, segments: segments1, previousChain: F.c0(epoch: 1), chainKey: wrongKey)
        moved1.replaceSubrange((moved1.count - 16)..., with: first.chainTag)
        var moved2 = RecordV3Encoder.assemble(kind: 1, sequence: 2, part: 1, segments: segments2, previousChain: first.chainTag, chainKey: wrongKey)
        moved2.replaceSubrange((moved2.count - 16)..., with: second.chainTag)
        #expect(try RecordV3Decoder.scan(moved1).segments.count == 2, "the frame holds together")
        for (bytes, previous) in [(moved1, F.c0(epoch: 1)), (moved2, first.chainTag)] {
            let refusal = F.refusal { () throws(KeychainError) in _ = try RecordV3Decoder.decode(bytes, previousChain: previous, keys: keys) }
            #expect(refusal?.offset == bytes.count - 16 && refusal?.reason.contains("chain tag") == true, "\(String(describing: refusal))")
        }
    }
}
