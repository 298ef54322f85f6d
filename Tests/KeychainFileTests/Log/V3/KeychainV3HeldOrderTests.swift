import Foundation
import Testing
@testable import KeychainFile

/// Pages a recovering read holds past damage to their chain (SPEC.md §37.6) are applied in log order with every page
/// after them: an item's update in a held page is never applied after a later one, and a move between a held group and
/// a proven one keeps the item.
@Suite("Format version 3: held pages apply in the order they were written")
struct KeychainV3HeldOrderTests {
    static let groupA = KeychainV3GroupTests.groupA
    static let groupB = KeychainV3GroupTests.groupB

    /// Destroys group B's page holding `big` (commit `record`) beyond parity, all but its tag, so that B's chain goes on
    /// past it from the tag as read, and that commit's heads: B's later pages are held until heads confirm them.
    static func loseBigPage(_ map: V3LogMap, big: ItemID, at path: String) throws -> V3LogMap.Page {
        let page = try #require(map.pages(of: groupB).first { $0.puts.contains { $0.id == big } })
        try map.destroy((page.segment.lowerBound + RecordV3.segmentHeaderSize)..<(page.pageBox.upperBound - 16), at: path)
        try map.destroy(page.pageBox.upperBound..<page.segment.upperBound, at: path)
        try map.destroy(try #require(map.headsBoxes[page.record]), at: path)
        return page
    }

    static func id(_ keychain: Keychain, _ account: String) throws -> ItemID {
        try #require(try keychain.search(.genericPassword(service: "svc", account: account), returning: .persistentReference)[0].persistentReference?.itemID)
    }

    /// The same chunk's parity cannot rebuild any of it once the big page is destroyed.
    static func requireSameChunk(_ ranges: [Range<Int>]) throws {
        let chunks = Set(ranges.flatMap { [$0.lowerBound / ChunkParity.dataLength, ($0.upperBound - 1) / ChunkParity.dataLength] })
        try #require(chunks.count == 1, "ranges \(ranges) in chunks \(chunks)")
    }

    @Test("An update held past damage is not applied after a later update whose secret box is lost: the item is left out, named, never served at the older version")
    func damagedSecretAfterHeldUpdate() throws {
        let directory = TemporaryDirectory()
        let keychain = try V3Keychain.create(in: directory)
        let path = directory.file("v3.kcf")
        try keychain.add(GenericPassword(service: "svc", account: "a", accessGroup: Self.groupA, value: Array("a-value".utf8)))
        try keychain.add(GenericPassword(service: "svc", account: "x", accessGroup: Self.groupB, value: Array("x-value-1".utf8)))
        try keychain.add(GenericPassword(service: "svc", account: "big", accessGroup: Self.groupB, value: [UInt8](repeating: 7, count: 14_000)))
        try keychain.update(.genericPassword(service: "svc", account: "x"), setting: [:], secret: Array("x-value-2".utf8))
        try keychain.update(.genericPassword(service: "svc", account: "x"), setting: [:], secret: Array("x-value-3".utf8))
        let (x, big) = (try Self.id(keychain, "x"), try Self.id(keychain, "big"))
        let map = try V3LogMap(keychain)
        let lost = try Self.loseBigPage(map, big: big, at: path)
        let pagesOfX = map.pages(of: Self.groupB).filter { $0.puts.contains { $0.id == x } && $0.record > lost.record }
        try #require(pagesOfX.count == 2, "x's two updates after the big page")
        // The first update's commit's heads are lost too, so its page stays held; the second loses x's secret box.
        let secondHeads = try #require(map.headsBoxes[pagesOfX[0].record])
        try map.destroy(secondHeads, at: path)
        let box = try #require(pagesOfX[1].puts.first { $0.id == x }?.box)
        try map.destroy((box.lowerBound + 12)..<(box.upperBound - 16), at: path)
        try Self.requireSameChunk([lost.segment, secondHeads, box])
        #expect(throws: KeychainError.self) { _ = try V3Keychain.open(path) }

        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        let served = try liveSecrets(recovered)
        #expect(served["x"] == nil, "x is served at an older version: \(served["x"].map { String(decoding: $0, as: UTF8.self) } ?? "")")
        #expect(served == ["a": Array("a-value".utf8)])
        let damage = recovered.recovery?.damage ?? []
        #expect(damage.contains { $0.itemID == x && $0.loss == .item }, "\(damage)")
        #expect(damage.contains { $0.itemID == nil && $0.offset <= map.physical(lost.segment.upperBound) }, "the big page is listed: \(damage)")
    }

    @Test("A move out of a group whose page is held, into a group whose chain is proven, keeps the item: the put waits behind the held deletion")
    func moveFromHeldGroup() throws {
        let directory = TemporaryDirectory()
        let keychain = try V3Keychain.create(in: directory)
        let path = directory.file("v3.kcf")
        try keychain.add(GenericPassword(service: "svc", account: "a", accessGroup: Self.groupA, value: Array("a-value".utf8)))
        try keychain.add(GenericPassword(service: "svc", account: "x", accessGroup: Self.groupB, value: Array("x-value".utf8)))
        try keychain.add(GenericPassword(service: "svc", account: "big", accessGroup: Self.groupB, value: [UInt8](repeating: 7, count: 14_000)))
        _ = try keychain.update(.genericPassword(service: "svc", account: "x"), setting: [.accessGroup: .string(Self.groupA)])
        let (x, big) = (try Self.id(keychain, "x"), try Self.id(keychain, "big"))
        let map = try V3LogMap(keychain)
        let lost = try Self.loseBigPage(map, big: big, at: path)
        let move = try #require(map.pages.last { $0.puts.contains { $0.id == x } })
        try #require(move.keyID == map.keyIDs[Self.groupA] && move.record == lost.record + 1, "the move's put in A, in the next commit")
        try Self.requireSameChunk([lost.segment, move.segment])

        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        let served = try recovered.find(GenericPassword.self, matching: .genericPassword(service: "svc", account: "x"))
        #expect(served.map(\.accessGroup) == [Self.groupA], "x after the move")
        #expect(served.map(\.value) == [Array("x-value".utf8)])
        let damage = recovered.recovery?.damage ?? []
        #expect(!damage.contains { $0.itemID == x }, "x is named: \(damage)")
        #expect(!damage.isEmpty)
    }

    @Test("An exchange of two items' primary keys in one commit, read past damage, is applied as one change: both items are served exchanged and neither is named")
    func exchangeAppliedTogether() throws {
        let directory = TemporaryDirectory()
        let keychain = try V3Keychain.create(in: directory)
        let path = directory.file("v3.kcf")
        try keychain.add(GenericPassword(service: "svc", account: "a", accessGroup: Self.groupA, value: Array("a-value".utf8)))
        try keychain.add(GenericPassword(service: "svc", account: "p", accessGroup: Self.groupB, value: Array("p-value".utf8)))
        try keychain.add(GenericPassword(service: "svc", account: "q", accessGroup: Self.groupB, value: Array("q-value".utf8)))
        try keychain.add(GenericPassword(service: "svc", account: "big", accessGroup: Self.groupB, value: [UInt8](repeating: 7, count: 14_000)))
        let (p, q, big) = (try Self.id(keychain, "p"), try Self.id(keychain, "q"), try Self.id(keychain, "big"))
        // p and q exchange accounts in one commit, as SPEC.md §37.6 rule 7 has a record do it: one page puts p with q's
        // primary key while q still holds it, and q with p's. (This library's batches keep each step, so the record
        // is made through the log.)
        let log = try V3Keychain.log(keychain)
        let exchanged = try [(p, "q", "p-value"), (q, "p", "q-value")].map { (id, account, value) -> LogEntry in
            .put(
                id: id,
                attributes: try ItemAttributes(
                    itemClass: .genericPassword,
                    values: [.service: .string("svc"), .account: .string(account), .accessGroup: .string(Self.groupB),
                             .creationDate: .date(Date()), .modificationDate: .date(Date())]),
                secret: .bytes(Array(value.utf8)))
        }
        var random = RandomSource(SystemRandomNumberGenerator())
        _ = try keychain.withLock { () throws(KeychainError) in try log.append(exchanged, before: { keychain.index[$0] }, using: &random) }
        let reopened = try V3Keychain.open(path)
        let afterExchange = try liveSecrets(reopened)
        #expect(
            afterExchange == ["a": Array("a-value".utf8), "p": Array("q-value".utf8), "q": Array("p-value".utf8), "big": [UInt8](repeating: 7, count: 14_000)],
            "\(afterExchange.mapValues { String(decoding: $0.prefix(9), as: UTF8.self) })")
        let map = try V3LogMap(reopened)
        let lost = try Self.loseBigPage(map, big: big, at: path)
        let exchange = try #require(map.pages.last { $0.puts.contains { $0.id == p } })
        try #require(exchange.record == lost.record + 1 && exchange.puts.map(\.id) == [p, q], "the exchange in one page of the next commit")
        try Self.requireSameChunk([lost.segment, exchange.segment])

        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        #expect(try liveSecrets(recovered) == ["a": Array("a-value".utf8), "p": Array("q-value".utf8), "q": Array("p-value".utf8)])
        let damage = recovered.recovery?.damage ?? []
        #expect(!damage.contains { $0.itemID == p || $0.itemID == q }, "p or q is named: \(damage)")
        #expect(!damage.isEmpty)
    }
}
