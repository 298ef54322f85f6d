import Foundation
import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// Version 2 records: pages of attributes after their secret boxes; every box verified on decode, secrets
/// bound to their items and to the page that names them, pages chained.
@Suite("Format v2: records of pages and secret boxes")
struct RecordV2Tests {
    static func keys(epoch: UInt64 = 1) throws -> RecordKeysV2 {
        try RecordKeysV2(
            fileID: [UInt8](repeating: 0xF1, count: 16), epoch: epoch,
            recordKey: SymmetricKey(data: [UInt8](repeating: 0x11, count: 32)),
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

    @Test("A record cut short — its last page and secrets dropped, counts and lengths rewritten — is refused")
    func cutShortRefused() throws {
        let keys = try Self.keys()
        var random = SplitMix64(seed: 6)
        let entries = try Self.entries(200)
        let record = try RecordV2Encoder.encode(entries, kind: .commit, sequence: 1, part: 0, previousChain: Self.c0, keys: keys, using: &random)
        let scanned = try RecordV2Decoder.scan(record.bytes, at: 0)
        let keptPages = scanned.pages.dropLast()
        let cutAt = keptPages.last!.box.upperBound
        var cut = Array(record.bytes[0..<cutAt])
        let body = UInt32(cut.count - 8)
        let keptEntries = entries.count - RecordV2Encoder.paginate(entries).last!.count
        let keptBoxes = keptPages.last!.boxIndex + 1
        func put32(_ value: UInt32, at offset: Int) { for i in 0..<4 { cut[offset + i] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(i))) } }
        put32(body, at: 0); put32(body ^ 0xFFFF_FFFF, at: 4); put32(UInt32(keptEntries), at: 21); put32(keptBoxes, at: 25)
        RecordV2Forgery.refreshFrameCheck(&cut)
        _ = try RecordV2Decoder.scan(cut, at: 0)   // the frame itself is consistent
        #expect(throws: KeychainError.self) { try RecordV2Decoder.decode(cut, at: 0, previousChain: Self.c0, keys: keys) }
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
        // The page still names the fresh box's tag: refused until the page names the copied one.
        #expect(throws: KeychainError.self) { try RecordV2Decoder.decode(copied, at: 0, previousChain: Self.c0, keys: new) }
        #expect(try RecordV2Decoder.openSecret(box, of: id, in: record.bytes, keys: new) == secret)
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
    }
}
