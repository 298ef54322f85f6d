import Foundation
import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// Version 2 records: pages of attributes after their secret boxes; every box verified on decode, secrets
/// bound to their items and to the page that names them, pages chained.
@Suite("Format v2: records of pages and secret boxes")
struct RecordV2Tests {
    /// The test keys; each epoch's record key differs, as a real epoch's does, and the secret key does not.
    static func keys(epoch: UInt64 = 1) throws -> RecordKeysV2 {
        try RecordKeysV2(
            fileID: [UInt8](repeating: 0xF1, count: 16), epoch: epoch,
            recordKey: SymmetricKey(data: [UInt8](repeating: 0x11 &+ UInt8(truncatingIfNeeded: epoch &- 1), count: 32)),
            secretKey: SymmetricKey(data: [UInt8](repeating: 0x22, count: 32)))
    }

    static let c0 = [UInt8](repeating: 0xC0, count: 16)

    /// A generic password; its secret is `secretLength` random bytes, or 0 … 63 when it is negative.
    static func put(_ n: Int, secretLength: Int = -1, using random: inout SplitMix64) throws -> EntryV2 {
        let attributes = try ItemAttributes(itemClass: .genericPassword, values: [
            .service: .string("service \(n)"), .account: .string("account-\(n)"),
            .creationDate: .date(Date(timeIntervalSince1970: 1_700_000_000)),
            .modificationDate: .date(Date(timeIntervalSince1970: 1_700_000_000 + Double(n))),
        ])
        let count = secretLength >= 0 ? secretLength : Int(random.next() % 64)
        precondition(count <= RecordV2.maximumSecretSize, "secret length \(count)")
        return .put(id: ItemID(using: &random), attributes: attributes, secret: bytes(count, using: &random))
    }

    static func bytes(_ count: Int, using random: inout SplitMix64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        for _ in 0..<count { out.append(UInt8(truncatingIfNeeded: random.next())) }
        return out
    }

    static func entries(_ count: Int, seed: UInt64 = 1) throws -> [EntryV2] {
        var random = SplitMix64(seed: seed)
        var entries: [EntryV2] = []
        for n in 0..<count {
            switch n % 7 {
            case 3: entries.append(.delete(id: ItemID(using: &random), time: Int64(n) * 1_000))
            case 5: entries.append(.tombstone(id: ItemID(using: &random), time: -Int64(n)))
            default: entries.append(try put(n, using: &random))
            }
        }
        return entries
    }

    /// The offset and reason of the `.corrupted` error decoding the record at 0 throws; nil when it decodes or
    /// throws something else.
    static func refusal(_ bytes: [UInt8], previousChain: [UInt8] = c0, keys: RecordKeysV2) -> (offset: Int, reason: String)? {
        do {
            _ = try RecordV2Decoder.decode(bytes, at: 0, previousChain: previousChain, keys: keys)
            return nil
        } catch {
            if case .corrupted(let offset, let reason) = error { return (offset, reason) }
            return nil
        }
    }

    static func check(_ decoded: [DecodedEntryV2], against entries: [EntryV2], bytes: [UInt8], keys: RecordKeysV2) throws {
        #expect(decoded.count == entries.count)
        for (got, expected) in zip(decoded, entries) {
            switch (got, expected) {
            case (.put(let id, let attributes, let box), .put(let expectedID, let expectedAttributes, let secret)):
                #expect(id == expectedID && attributes == expectedAttributes)
                #expect(try RecordV2Decoder.openSecret(box, of: id, in: bytes, keys: keys) == secret)
            case (.delete(let id, let time), .delete(let expectedID, let expectedTime)),
                 (.tombstone(let id, let time), .tombstone(let expectedID, let expectedTime)):
                #expect(id == expectedID && time == expectedTime)
            default:
                Issue.record("entry \(got) decoded for \(expected)")
            }
        }
    }

    @Test("A record of 500 entries round-trips over several pages, and the next record chains to it")
    func roundTrip() throws {
        let keys = try Self.keys()
        var random = SplitMix64(seed: 9)
        let entries = try Self.entries(500)
        let first = try RecordV2Encoder.encode(entries, kind: .commit, sequence: 1, part: 0, previousChain: Self.c0, keys: keys, using: &random)
        let pages = RecordV2Encoder.paginate(entries)
        #expect(pages.count > 5)
        let second = try RecordV2Encoder.encode([try Self.put(1, secretLength: 100_000, using: &random)], kind: .commit, sequence: 2, part: 0, previousChain: first.chain, keys: keys, using: &random)
        let log = first.bytes + second.bytes
        let one = try RecordV2Decoder.decode(log, at: 0, previousChain: Self.c0, keys: keys)
        try Self.check(one.entries, against: entries, bytes: log, keys: keys)
        #expect(one.chain == first.chain && one.end == first.bytes.count && one.sequence == 1)
        let two = try RecordV2Decoder.decode(log, at: one.end, previousChain: one.chain, keys: keys)
        #expect(two.entries.count == 1 && two.end == log.count && two.chain == second.chain)
        // The second record does not open after another chain value.
        #expect(throws: KeychainError.self) { try RecordV2Decoder.decode(log, at: one.end, previousChain: Self.c0, keys: keys) }
    }

    @Test("Pages hold at most 8 KiB of plaintext unless one entry alone is larger")
    func pagination() throws {
        var random = SplitMix64(seed: 3)
        var entries = try Self.entries(300)
        var big = try ItemAttributes(itemClass: .genericPassword, values: [
            .service: .string("big"), .generic: .bytes([UInt8](repeating: 7, count: 20_000)),
            .creationDate: .date(Date(timeIntervalSince1970: 0)), .modificationDate: .date(Date(timeIntervalSince1970: 0)),
        ])
        entries.insert(.put(id: ItemID(using: &random), attributes: big, secret: []), at: 100)
        big = try ItemAttributes(itemClass: .genericPassword, values: [.service: .string("x"), .creationDate: .date(Date()), .modificationDate: .date(Date())])
        entries.append(.put(id: ItemID(using: &random), attributes: big, secret: [1]))
        let pages = RecordV2Encoder.paginate(entries)
        #expect(pages.map(\.count).reduce(0, +) == entries.count)
        for page in pages {
            let size = 3 + entries[page].reduce(0) { $0 + $1.pageByteCount }
            #expect(size <= RecordV2.pagePlaintextLimit || page.count == 1, "page \(page)")
        }
        #expect(pages.contains { $0 == 100..<101 })
        let keys = try Self.keys()
        let record = try RecordV2Encoder.encode(entries, kind: .commit, sequence: 1, part: 0, previousChain: Self.c0, keys: keys, using: &random)
        try Self.check(try RecordV2Decoder.decode(record.bytes, at: 0, previousChain: Self.c0, keys: keys).entries, against: entries, bytes: record.bytes, keys: keys)
    }

    @Test("Every flipped bit of a record is refused: decode throws, never returns other entries")
    func everyBitRefused() throws {
        let keys = try Self.keys()
        var random = SplitMix64(seed: 4)
        let entries = try Self.entries(12)
        let record = try RecordV2Encoder.encode(entries, kind: .commit, sequence: 7, part: 0, previousChain: Self.c0, keys: keys, using: &random)
        var accepted: [Int] = []
        for bit in 0..<(record.bytes.count * 8) {
            var damaged = record.bytes
            damaged[bit / 8] ^= UInt8(1 << (bit % 8))
            if (try? RecordV2Decoder.decode(damaged, at: 0, previousChain: Self.c0, keys: keys)) != nil { accepted.append(bit) }
        }
        #expect(accepted.count == 0, "bits accepted, the first: \(Array(accepted.prefix(20)))")
    }

    @Test("A secret box moved to another item, or an older box of the same item put back, is refused")
    func secretsBoundToItemAndPage() throws {
        let keys = try Self.keys()
        var random = SplitMix64(seed: 5)
        let a = try Self.put(1, secretLength: 32, using: &random), b = try Self.put(2, secretLength: 32, using: &random)
        let record = try RecordV2Encoder.encode([a, b], kind: .commit, sequence: 1, part: 0, previousChain: Self.c0, keys: keys, using: &random)
        let scanned = try RecordV2Decoder.scan(record.bytes, at: 0)
        let boxes = scanned.pages[0].secrets
        #expect(boxes.count == 2 && boxes[0].count == boxes[1].count)
        var swapped = record.bytes
        swapped.replaceSubrange(boxes[0], with: record.bytes[boxes[1]])
        swapped.replaceSubrange(boxes[1], with: record.bytes[boxes[0]])
        #expect(throws: KeychainError.self) { try RecordV2Decoder.decode(swapped, at: 0, previousChain: Self.c0, keys: keys) }
        // The same item written again: its new secret box swapped for the old one.
        guard case .put(let id, let attributes, _) = a else { return }
        let again = try RecordV2Encoder.encode([.put(id: id, attributes: attributes, secret: [UInt8](repeating: 9, count: 32))], kind: .commit, sequence: 2, part: 0, previousChain: record.chain, keys: keys, using: &random)
        let newBox = try RecordV2Decoder.scan(again.bytes, at: 0).pages[0].secrets[0]
        var replayed = again.bytes
        replayed.replaceSubrange(newBox, with: record.bytes[boxes[0]])
        #expect(throws: KeychainError.self) { try RecordV2Decoder.decode(replayed, at: 0, previousChain: record.chain, keys: keys) }
        // A page that names, for item a, a box sealed for item b — its true length and digest: only the item id
        // in the box's associated data refuses it.
        guard case .put(let otherID, _, let otherSecret) = b else { return }
        let boxForB = try RecordV2Forgery.sealSecret(otherSecret, id: otherID, keys: keys, using: &random)
        let misnamed = try RecordV2Forgery.record(
            pages: [([boxForB], [1, 0, 1] + RecordV2Forgery.putEntry(id: id, attributes: attributes, secretLength: 32, digest: Array(RecordV2.secretBoxDigest(boxForB))))],
            entryCount: 1, previousChain: Self.c0, keys: keys, using: &random)
        let refusal = Self.refusal(misnamed.bytes, keys: keys)
        let boxStart = try RecordV2Decoder.scan(misnamed.bytes, at: 0).pages[0].secrets[0].lowerBound
        #expect(refusal?.offset == boxStart && refusal?.reason.contains("does not authenticate") == true, "\(String(describing: refusal))")
        // Sealed for item a, the same page decodes: the forgery itself is sound.
        let boxForA = try RecordV2Forgery.sealSecret(otherSecret, id: id, keys: keys, using: &random)
        let named = try RecordV2Forgery.record(
            pages: [([boxForA], [1, 0, 1] + RecordV2Forgery.putEntry(id: id, attributes: attributes, secretLength: 32, digest: Array(RecordV2.secretBoxDigest(boxForA))))],
            entryCount: 1, previousChain: Self.c0, keys: keys, using: &random)
        #expect(Self.refusal(named.bytes, keys: keys) == nil)
    }

    @Test("A secret box re-forged by a holder of the secret key — same length, nonce and tag, other bytes — is refused: its page names its digest")
    func secretBoxPinnedByDigest() throws {
        let keys = try Self.keys()
        var random = SplitMix64(seed: 12)
        let entry = try Self.put(1, secretLength: 40, using: &random)
        guard case .put(let id, _, let secret) = entry else { return }
        let record = try RecordV2Encoder.encode([entry], kind: .commit, sequence: 1, part: 0, previousChain: Self.c0, keys: keys, using: &random)
        let box = try RecordV2Decoder.scan(record.bytes, at: 0).pages[0].secrets[0]
        let secretKey = SymmetricKey(data: [UInt8](repeating: 0x22, count: 32))
        let forged = try GCMForgery.sameTag(as: Array(record.bytes[box]), key: secretKey, difference: GCMForgery.Element(high: 0x0123_4567, low: 0x89AB))
        // GCM alone takes it: it opens, for the same item, to another secret.
        var other = [UInt8](repeating: 0, count: secret.count)
        let aad = BoxAADV2.secret(fileID: keys.fileID, keyID: 0, itemID: id)
        try forged.withUnsafeBytes { forged in
            try aad.withUnsafeBytes { aad in try other.withUnsafeMutableBytes { try AES.GCM.open(forged, using: keys.secret, authenticating: aad, into: $0) } }
        }
        #expect(other != secret && forged.suffix(16) == record.bytes[box].suffix(16))
        var substituted = record.bytes
        substituted.replaceSubrange(box, with: forged)
        do {
            _ = try RecordV2Decoder.decode(substituted, at: 0, previousChain: Self.c0, keys: keys)
            Issue.record("a secret box with the same tag but other bytes was accepted")
        } catch {
            guard case .corrupted(let offset, let reason) = error else { Issue.record("\(error)"); return }
            #expect(offset == box.lowerBound && reason.contains("digest"), "\(error)")
        }
        // verifySecrets, given the digest the page names, refuses it too; its tag alone passes.
        let named = Array(RecordV2.secretBoxDigest(record.bytes[box]))
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) {
            try RecordV2Decoder.verifySecrets([(box, id)], in: substituted, keys: keys, digests: [named])
        }
        try RecordV2Decoder.verifySecrets([(box, id)], in: substituted, keys: keys)
        try RecordV2Decoder.verifySecrets([(box, id)], in: record.bytes, keys: keys, digests: [named])
    }

    @Test("A record cut short (box count rewritten), or with its entry count rewritten, is refused by its first page's authentication, each count on its own")
    func cutShortRefused() throws {
        let keys = try Self.keys()
        var random = SplitMix64(seed: 6)
        let entries = try Self.entries(200)
        let record = try RecordV2Encoder.encode(entries, kind: .commit, sequence: 1, part: 0, previousChain: Self.c0, keys: keys, using: &random)
        let scanned = try RecordV2Decoder.scan(record.bytes, at: 0)
        #expect(scanned.pages.count >= 3)
        let firstPage = scanned.pages[0].box.lowerBound
        // The last page and its secrets dropped: the length and box count must follow for the frame to hold
        // together; the entry count is left as it was.
        let keptPages = scanned.pages.dropLast()
        var cut = Array(record.bytes[0..<keptPages.last!.box.upperBound])
        let body = UInt32(cut.count - 8)
        RecordV2Forgery.put32(body, into: &cut, at: 0)
        RecordV2Forgery.put32(body ^ 0xFFFF_FFFF, into: &cut, at: 4)
        RecordV2Forgery.put32(keptPages.last!.boxIndex + 1, into: &cut, at: 25)
        RecordV2Forgery.refreshFrameCheck(&cut)
        _ = try RecordV2Decoder.scan(cut, at: 0)   // the frame itself is consistent
        let cutRefusal = Self.refusal(cut, keys: keys)
        #expect(cutRefusal?.offset == firstPage && cutRefusal?.reason.contains("does not authenticate") == true, "\(String(describing: cutRefusal))")
        // Whole, with only its entry count changed.
        for count in [UInt32(entries.count - 1), UInt32(entries.count + 1)] {
            var miscounted = record.bytes
            RecordV2Forgery.put32(count, into: &miscounted, at: 21)
            RecordV2Forgery.refreshFrameCheck(&miscounted)
            let refusal = Self.refusal(miscounted, keys: keys)
            #expect(refusal?.offset == firstPage && refusal?.reason.contains("does not authenticate") == true, "\(count): \(String(describing: refusal))")
        }
    }

    @Test("A secret box copied verbatim into a later epoch's record, under a new page, still verifies (what a rewrite does)")
    func secretBoxesArePositionIndependent() throws {
        let old = try Self.keys(epoch: 1), new = try Self.keys(epoch: 2)
        var random = SplitMix64(seed: 7)
        let entry = try Self.put(1, secretLength: 40, using: &random)
        let record = try RecordV2Encoder.encode([entry], kind: .commit, sequence: 5, part: 0, previousChain: Self.c0, keys: old, using: &random)
        let box = try RecordV2Decoder.scan(record.bytes, at: 0).pages[0].secrets[0]
        // A new-epoch record around the very same box: encode with a placeholder secret of the same length,
        // then put the old box in its place and re-seal nothing else but the page that names it.
        guard case .put(let id, let attributes, let secret) = entry else { return }
        let fresh = try RecordV2Encoder.encode([.put(id: id, attributes: attributes, secret: secret)], kind: .commit, sequence: 1, part: 0, previousChain: Self.c0, keys: new, using: &random)
        let freshBox = try RecordV2Decoder.scan(fresh.bytes, at: 0).pages[0].secrets[0]
        #expect(record.bytes[box] != fresh.bytes[freshBox])
        var copied = fresh.bytes
        copied.replaceSubrange(freshBox, with: record.bytes[box])
        // The page still names the fresh box's digest: refused until the page names the copied one.
        #expect(throws: KeychainError.self) { try RecordV2Decoder.decode(copied, at: 0, previousChain: Self.c0, keys: new) }
        // The new epoch's page sealed again, naming the copied box's digest (a put's digest ends its plaintext).
        let copiedDigest = Array(RecordV2.secretBoxDigest(record.bytes[box]))
        try RecordV2Forgery.resealPage(&copied, page: 0, previousChain: Self.c0, keys: new) { plaintext in
            plaintext.replaceSubrange((plaintext.count - 16)..<plaintext.count, with: copiedDigest)
        }
        let decoded = try RecordV2Decoder.decode(copied, at: 0, previousChain: Self.c0, keys: new)
        guard case .put(let decodedID, _, let decodedBox)? = decoded.entries.first else {
            Issue.record("\(decoded.entries)")
            return
        }
        #expect(decodedID == id && copied[decodedBox] == record.bytes[box])
        #expect(try RecordV2Decoder.openSecret(decodedBox, of: id, in: copied, keys: new) == secret)
    }

    @Test("A record larger than 16 MiB is refused with limitReached, and hostile frames never trap")
    func limitsAndHostileFrames() throws {
        let keys = try Self.keys()
        var random = SplitMix64(seed: 8)
        var entries: [EntryV2] = []
        for n in 0..<17 { entries.append(try Self.put(n, secretLength: 1 << 20, using: &random)) }
        do {
            _ = try RecordV2Encoder.encode(entries, kind: .commit, sequence: 1, part: 0, previousChain: Self.c0, keys: keys, using: &random)
            Issue.record("a 17 MiB record was encoded")
        } catch {
            guard case .limitReached = error else { Issue.record("\(error)"); return }
        }
        for _ in 0..<20_000 {
            let count = Int(random.next() % 96)
            var bytes = Self.bytes(count, using: &random)
            if count >= 8, random.next() % 2 == 0 {
                let length = UInt32(count - 8)
                for i in 0..<4 { bytes[i] = UInt8(truncatingIfNeeded: length >> (24 - 8 * UInt32(i))); bytes[4 + i] = ~bytes[i] }
            }
            _ = try? RecordV2Decoder.decode(bytes, at: 0, previousChain: Self.c0, keys: keys)
        }
        // Frames whose check passes, with box fields of random roles and lengths, up to 2 KiB: the walker and
        // what follows it, not only the length check.
        for _ in 0..<5_000 {
            var body: [UInt8] = []
            var fields: [UInt8] = []
            let boxes = 1 + Int(random.next() % 6)
            for _ in 0..<boxes {
                let length = 28 + Int(random.next() % 300)
                let field: [UInt8] = [UInt8(random.next() % 2 == 0 ? 0 : random.next() % 4), UInt8(1 + random.next() % 2)]
                    + (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) }
                fields += field
                body += field + Self.bytes(length, using: &random)
            }
            var frame = ByteWriter()
            let length = UInt32(RecordV2.fixedSize - 8 + body.count)
            frame.writeUInt32(length)
            frame.writeUInt32(length ^ 0xFFFF_FFFF)
            frame.writeUInt8(random.next() % 4 == 0 ? 3 : 1)
            frame.writeUInt64(random.next() % 3)
            frame.writeUInt32(UInt32(random.next() % 2))
            frame.writeUInt32(UInt32(1 + random.next() % 20))
            frame.writeUInt32(UInt32(boxes))
            frame.writeBytes(RecordV2.frameCheck(frame: frame.bytes, boxFields: fields))
            let record = frame.bytes + body
            #expect((try? RecordV2Decoder.decode(record, at: 0, previousChain: Self.c0, keys: keys)) == nil)
        }
    }

    @Test("Pages that authenticate but whose plaintext is malformed are corrupted, each by its own check")
    func malformedPagePlaintexts() throws {
        let keys = try Self.keys()
        var random = SplitMix64(seed: 13)
        let id = ItemID(using: &random)
        let attributes = try ItemAttributes(itemClass: .genericPassword, values: [
            .service: .string("s"), .creationDate: .date(Date(timeIntervalSince1970: 0)), .modificationDate: .date(Date(timeIntervalSince1970: 0)),
        ])
        let secret = [UInt8](repeating: 0x44, count: 10)
        let box = try RecordV2Forgery.sealSecret(secret, id: id, keys: keys, using: &random)
        let digest = Array(RecordV2.secretBoxDigest(box))
        let put = RecordV2Forgery.putEntry(id: id, attributes: attributes, secretLength: 10, digest: digest)
        let deletion: [UInt8] = [2] + id.bytes + [UInt8](repeating: 0, count: 8)
        let cases: [(name: String, secrets: [[UInt8]], plaintext: [UInt8], reason: String)] = [
            ("no entries", [], [1, 0, 0], "no entries"),
            ("attributes longer than the page", [box], [1, 0, 1, 1, 0xFF, 0xFF, 0xFF, 0xF0] + put.dropFirst(5), "truncated attributes"),
            ("a secret of 4 GiB", [box], [1, 0, 1] + put.dropLast(20) + [0xFF, 0xFF, 0xFF, 0xFF] + digest, "at most 1 MiB"),
            ("bytes after the last entry", [], [1, 0, 1] + deletion + [0], "after the last entry"),
            ("more puts than boxes", [], [1, 0, 1] + put, "more puts than secret boxes"),
            ("a box no entry names", [box], [1, 0, 1] + deletion, "no entry names"),
            ("more entries declared than held", [], [1, 0, 3] + deletion, "truncated entry kind"),
            ("an unknown entry kind", [], [1, 0, 1, 9] + deletion.dropFirst(), "unknown entry kind 9"),
            ("a deletion cut short", [], [1, 0, 1] + deletion.dropLast(3), "truncated time"),
            ("a secret length the box does not have", [box], [1, 0, 1] + put.dropLast(20) + [0, 0, 0, 11] + digest, "page says 11"),
        ]
        for (name, secrets, plaintext, reason) in cases {
            let record = try RecordV2Forgery.record(pages: [(secrets, plaintext)], entryCount: 1, previousChain: Self.c0, keys: keys, using: &random)
            let refusal = Self.refusal(record.bytes, keys: keys)
            #expect(refusal?.reason.contains(reason) == true, "\(name): \(String(describing: refusal))")
        }
        // The same parts, well formed, decode.
        let good = try RecordV2Forgery.record(pages: [([box], [1, 0, 2] + put + deletion)], entryCount: 2, previousChain: Self.c0, keys: keys, using: &random)
        #expect(Self.refusal(good.bytes, keys: keys) == nil)
        #expect(try RecordV2Decoder.decode(good.bytes, at: 0, previousChain: Self.c0, keys: keys).entries.count == 2)
    }
}
