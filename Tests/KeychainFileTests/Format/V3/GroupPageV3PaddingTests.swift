import Foundation
import Testing
@testable import KeychainFile
@_spi(KeychainFileInternals) import KeychainCrypto

/// The padding of version 3 group pages (Docs/FormatVersion3.md §2.5.1, review of session 46, finding 2): a page's
/// plaintext is zero-padded to a size class, so that a holder of the log key but not the group's key cannot count a
/// commit's deletions, or tell one put from a few, by the page box's length; and a reader takes only the one padding
/// the rule gives.
@Suite("Format v3: group pages padded to size classes")
struct GroupPageV3PaddingTests {
    typealias F = RecordV3Fixture

    @Test("Size classes: 256 bytes, then powers of two to 8 KiB, then multiples of 8 KiB")
    func sizeClasses() {
        let cases: [(Int, Int)] = [(3, 256), (256, 256), (257, 512), (511, 512), (4_097, 8_192), (8_192, 8_192), (8_193, 16_384), (16_385, 24_576)]
        for (unpadded, padded) in cases { #expect(GroupPageV3.paddedLength(unpadded) == padded, "\(unpadded)") }
    }

    @Test("A page of deletions alone: 1, 10, 11 and 300 deletions (28, 253, 278, 7,503 bytes) take 256, 256, 512 and 8,192", arguments: [(1, 256), (10, 256), (11, 512), (300, 8_192)])
    func deletionPages(count: Int, padded: Int) throws {
        var random = SplitMix64(seed: UInt64(count))
        let entries = (0..<count).map { _ in EntryV2.delete(id: ItemID(using: &random), time: 1_700_000_000_000) }
        let sealed = try GroupPageV3.seal(entries, keys: F.b, groupSequence: 1, previousTag: F.b.startValue(epoch: 1), using: &random)
        let segment = try OpaqueSegmentV3(bytes: sealed.segment)
        #expect(segment.pageBoxLength == padded + RecordV3.boxOverhead)
        #expect(segment.segmentLength == segment.pageBoxLength)
        let opened = try GroupPageV3.open(
            sealed.segment, segment: segment.segment, keys: F.b, groupSequence: 1, previousTag: F.b.startValue(epoch: 1), base: 0, place: "segment 0")
        #expect(opened.count == count)
    }

    /// One deletion's page plaintext (28 bytes) followed by `padding`, sealed under B's page key as page 1: a page only
    /// the padding rule can refuse.
    static func segment(padding: [UInt8]) throws -> (bytes: [UInt8], segment: SegmentV3) {
        var plaintext: [UInt8] = [1, 0, 1, 2] + [UInt8](repeating: 0x11, count: 16) + [0, 0, 1, 0x8B, 0xCF, 0xE5, 0x68, 0]
        #expect(plaintext.count == 28)
        plaintext += padding
        let aad = RecordAADV3.page(fileID: F.fileID, keyID: 2, groupSequence: 1, previousTag: F.b.startValue(epoch: 1))
        var random = SplitMix64(seed: 9)
        let box = try #require(try AES.GCM.seal(plaintext, using: F.b.pageKey, nonce: AES.GCM.Nonce(using: &random), authenticating: aad).combined)
        var bytes: [UInt8] = [2]
        for length in [box.count, box.count] { bytes += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] }
        bytes += box
        return (bytes, try OpaqueSegmentV3(bytes: bytes).segment)
    }

    @Test("Padding that is not zeros, or not the rule's length — a byte short, a byte long, the next class — is corrupted", arguments: [0, 1, 2, 3, 4])
    func wrongPadding(kind: Int) throws {
        var padding = [UInt8](repeating: 0, count: 228)
        switch kind {
        case 0: break                                 // the rule's: opens
        case 1: padding[100] = 1
        case 2: padding.removeLast()
        case 3: padding.append(0)
        default: padding += [UInt8](repeating: 0, count: 256)
        }
        let (bytes, segment) = try Self.segment(padding: padding)
        let open = { () throws(KeychainError) -> [DecodedEntryV2] in
            try GroupPageV3.open(bytes, segment: segment, keys: F.b, groupSequence: 1, previousTag: F.b.startValue(epoch: 1), base: 0, place: "segment 0")
        }
        if kind == 0 {
            #expect(try open().count == 1)
        } else {
            let refusal = F.refusal { () throws(KeychainError) in _ = try open() }
            #expect(refusal?.reason.contains("padding") == true, "kind \(kind): \(String(describing: refusal))")
        }
    }

    @Test("A batch whose pages padding doubles — one item of 4 KiB attributes to a page — is cut into parts that fit a record")
    func paddedPagesCutIntoParts() throws {
        let directory = TemporaryDirectory()
        let keychain = try V3Keychain.create(in: directory)
        let generic = [UInt8](repeating: 0x47, count: 4_050)
        // 3,000 pages of about 4.1 KiB each, 12 MiB as version 2 counts them, about 24 MiB padded to 8 KiB.
        try keychain.batch { (batch) throws(KeychainError) in
            for number in 0..<3_000 {
                var item = GenericPassword(service: "wide", account: "\(number)", value: [UInt8(number & 0xFF)])
                item.generic = generic
                try batch.add(item)
            }
        }
        let reopened = try V3Keychain.open(directory.file("v3.kcf"))
        #expect(reopened.count == 3_000)
        #expect(try reopened.search(.genericPassword(service: "wide", account: "2999"), returning: .attributes).first?.attributes?[.generic] == .bytes(generic))
    }
}
