import Foundation
import Testing
@testable import KeychainFile

/// A version 3 record whose chain tag is destroyed beyond what parity repairs, while its frame and every page tag
/// read (SPEC.md §25.3, §35.8): the tag its bytes compute stands for it when the next record's chain tag, or the
/// newest commit slot's head, names it — the link is proven, and nothing is named unconfirmed for it.
@Suite("Format version 3: a destroyed chain tag whose record's bytes compute the tag that follows")
struct KeychainV3DestroyedChainTagTests {
    typealias Link = ForkedCommitLinkTests

    /// The file of `Link.forked`'s keychain after x is updated with a 12,000-byte secret (the record `updated`) and,
    /// when `thenA`, a updated after it; that record's chain tag and 4,400 bytes of x's secret box destroyed (the two
    /// in one parity chunk, so that parity repairs neither).
    static func destroyedTag(thenA: Bool) throws -> (directory: TemporaryDirectory, path: String, x: ItemID, a: ItemID, z: ItemID) {
        let directory = TemporaryDirectory()
        let path = directory.file("current.kcf")
        let (keychain, _, _) = try Link.forked(version: 3, in: directory)
        try keychain.update(.genericPassword(service: "svc", account: "x"), setting: [:], secret: [UInt8](repeating: 2, count: 12_000))
        if thenA { try keychain.update(.genericPassword(service: "svc", account: "a"), setting: [:], secret: Array("a-value-2".utf8)) }
        let map = try V3LogMap(keychain)
        let x = try Link.id(of: "x", in: keychain)
        let page = try #require(map.pages.last { $0.puts.contains { $0.id == x } })
        let box = try #require(page.puts.first { $0.id == x }?.box)
        let record = map.records[page.record]
        try #require(record.upperBound < ChunkParity.dataLength, "the record lies in the log's first chunk")
        try map.destroy((box.lowerBound + 100)..<(box.lowerBound + 4_500), at: path)
        try map.destroy((record.upperBound - ChainTagV3.size)..<record.upperBound, at: path)
        return (directory, path, x, try Link.id(of: "a", in: keychain), try Link.id(of: "z", in: keychain))
    }

    @Test("A destroyed chain tag in the middle of the log: the next record links to the tag the record's bytes compute")
    func destroyedTagThenRecord() throws {
        let (directory, path, x, a, z) = try Self.destroyedTag(thenA: true)
        #expect(throws: KeychainError.self, "a plain open refuses the file") { _ = try Keychain.open(at: path, credential: TestKeychain.password) }
        let recovered = try KeychainV3RecoveryTests.openRecovering(path)
        let damage = recovered.recovery?.damage ?? []
        #expect(damage.contains { $0.itemID == x && $0.loss == .item }, "x's lost secret box is reported: \(damage)")
        #expect(!damage.contains { $0.loss == .unconfirmed }, "the link is proven, so nothing is unconfirmed: \(damage)")
        #expect(!damage.contains { $0.itemID == a || $0.itemID == z })
        let served = try liveSecrets(recovered)
        #expect(served == ["a": Array("a-value-2".utf8), "z": Array("z-value-1".utf8)], "x is left out, as its report says")
        _ = directory
    }

    @Test("A destroyed chain tag on the last record: the newest commit slot's head names the tag the record's bytes compute")
    func destroyedTagAtTheEnd() throws {
        let (directory, path, x, a, z) = try Self.destroyedTag(thenA: false)
        let recovered = try KeychainV3RecoveryTests.openRecovering(path)
        let damage = recovered.recovery?.damage ?? []
        #expect(damage.contains { $0.itemID == x && $0.loss == .item }, "x's lost secret box is reported: \(damage)")
        #expect(!damage.contains { $0.loss == .unconfirmed }, "the newest head confirms the computed tag: \(damage)")
        #expect(!damage.contains { $0.itemID == a || $0.itemID == z })
        #expect(try liveSecrets(recovered) == ["a": Array("a-value".utf8), "z": Array("z-value-1".utf8)])
        _ = directory
    }
}
