import Foundation
import Testing
@testable import KeychainFile

/// A keyless attacker who holds an older copy of a version 3 file (SPEC.md §37.6, "What a page's place proves"): a
/// page's associated data names no epoch, so after a compaction the older copy's pages of a group authenticate again
/// at the group sequences the new chain reaches. Damage the attacker makes lets a recovering read step over a page
/// with a tag the attacker chose; the older copy's next page then opens in the chain. Recovery must not serve it.
@Suite("Format version 3: a recovering read against pages spliced in from an older copy")
struct KeychainV3SpliceTests {
    static let groupA = KeychainV3GroupTests.groupA
    static let groupB = KeychainV3GroupTests.groupB

    /// The older copy and the current file of ``olderPageSplicedIn(headsToo:)``: the current file's keychain, the map
    /// of the older copy's log, and the paths of both.
    static func olderCopyThenCompacted(in directory: TemporaryDirectory) throws -> (keychain: Keychain, path: String, older: V3LogMap, olderPath: String) {
        let keychain = try V3Keychain.create(in: directory)
        let path = directory.file("v3.kcf")
        try keychain.add(GenericPassword(service: "svc", account: "a", accessGroup: Self.groupA, value: Array("a-value".utf8)))
        try keychain.add(GenericPassword(service: "svc", account: "x", accessGroup: Self.groupB, value: Array("x-value-1".utf8)))
        for version in 2...6 {
            try keychain.update(.genericPassword(service: "svc", account: "x"), setting: [:], secret: Array("x-value-\(version)".utf8))
        }
        let older = try V3LogMap(keychain)
        let olderPath = directory.file("older.kcf")
        try writeFileBytes(try fileBytes(path), to: olderPath)

        try keychain.compact()
        try keychain.delete(.genericPassword(service: "svc", account: "x"))
        try keychain.add(GenericPassword(service: "svc", account: "y", accessGroup: Self.groupB, value: [UInt8](repeating: 7, count: 14_000)))
        try keychain.add(GenericPassword(service: "svc", account: "w", accessGroup: Self.groupB, value: Array("w-value-9".utf8)))
        return (keychain, path, older, olderPath)
    }

    /// The older copy: item x of group B put, then updated five times, a page of B each. The current file: the same
    /// keychain compacted (B's chain starts again at page 1), x deleted, then y (a large secret) and w (x's sizes) put
    /// in B, a commit each. The attacker destroys y's page beyond what parity repairs, except its tag, which it sets
    /// to the older copy's tag of the page at y's group sequence, and puts the older copy's next page — x at an older
    /// version — in the place of w's. With `headsToo`, w's commit's heads are destroyed as well.
    @Test("A page spliced in from an older copy, past a page destroyed with a chosen tag, is not applied: the deleted item stays deleted, is named, and salvage does not write it", arguments: [false, true])
    func olderPageSplicedIn(headsToo: Bool) throws {
        let directory = TemporaryDirectory()
        let (keychain, path, older, olderPath) = try Self.olderCopyThenCompacted(in: directory)
        let map = try V3LogMap(keychain)
        let pagesOfB = map.pages(of: Self.groupB)
        let (y, w) = (pagesOfB[pagesOfB.count - 2], pagesOfB[pagesOfB.count - 1])
        try #require(y.record + 1 == w.record && w.record == map.records.count - 1, "y and w in the last two commits")
        let olderPages = older.pages(of: Self.groupB)
        let before = try #require(olderPages.first { $0.groupSequence == y.groupSequence })
        let spliced = try #require(olderPages.first { $0.groupSequence == w.groupSequence })
        let x = try #require(spliced.puts.first?.id)
        try #require(spliced.puts.count == 1 && older.pages(of: Self.groupB).first?.puts.first?.id == x, "the older page puts x")
        try #require(spliced.segment.count == w.segment.count, "segments of \(spliced.segment.count) and \(w.segment.count) bytes")

        // The attack, with no key: y's page and secret destroyed, its tag set to the older page's previous tag,
        // y's commit's heads destroyed, w's segment replaced byte for byte by the older copy's page of x.
        let tag = try older.bytes((before.pageBox.upperBound - 16)..<before.pageBox.upperBound, at: olderPath)
        try map.destroy((y.segment.lowerBound + RecordV3.segmentHeaderSize)..<y.segment.upperBound, at: path)
        try map.write(tag, at: y.pageBox.upperBound - 16, to: path)
        try map.destroy(try #require(map.headsBoxes[y.record]), at: path)
        try map.write(try older.bytes(spliced.segment, at: olderPath), at: w.segment.lowerBound, to: path)
        if headsToo { try map.destroy(try #require(map.headsBoxes[w.record]), at: path) }
        #expect(throws: KeychainError.self, "a plain open refuses the file") { _ = try V3Keychain.open(path) }

        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        let served = try liveSecrets(recovered)
        #expect(served["x"] == nil, "x, deleted, is served again as \(served["x"].map { String(decoding: $0, as: UTF8.self) } ?? "")")
        #expect(served == ["a": Array("a-value".utf8)], "y and w are lost, a is whole")
        let damage = recovered.recovery?.damage ?? []
        #expect(damage.contains { $0.itemID == x && $0.loss == .conflict }, "x is named: \(damage)")

        let report = try Keychain.salvage(from: path, credential: TestKeychain.password, to: directory.file("salvaged.kcf"))
        #expect(report.damages.contains { $0.itemID == x })
        #expect(try liveSecrets(V3Keychain.open(directory.file("salvaged.kcf"))) == served, "salvage writes what was served")
    }

    /// Review-s55's two-loss splice: as above, with w's heads destroyed, and a third page v after w whose page is
    /// destroyed with its tag kept. The chain, stepping over v from its tag as read, is back on the real chain, so v's
    /// commit's heads agree with it; they must not confirm the older page spliced in before the second loss.
    @Test("A page spliced in from an older copy, then a second page lost with its real tag kept, is not confirmed by the heads after it: the deleted item stays deleted and is named")
    func splicedBeforeSecondLoss() throws {
        let directory = TemporaryDirectory()
        let (keychain, path, older, olderPath) = try Self.olderCopyThenCompacted(in: directory)
        try keychain.add(GenericPassword(service: "svc", account: "v", accessGroup: Self.groupB, value: Array("v-value-8".utf8)))
        let map = try V3LogMap(keychain)
        let pagesOfB = map.pages(of: Self.groupB)
        let (y, w, v) = (pagesOfB[pagesOfB.count - 3], pagesOfB[pagesOfB.count - 2], pagesOfB[pagesOfB.count - 1])
        try #require(y.record + 2 == v.record && w.record + 1 == v.record && v.record == map.records.count - 1, "y, w and v in the last three commits")
        let olderPages = older.pages(of: Self.groupB)
        let before = try #require(olderPages.first { $0.groupSequence == y.groupSequence })
        let spliced = try #require(olderPages.first { $0.groupSequence == w.groupSequence })
        let x = try #require(spliced.puts.first?.id)
        try #require(spliced.segment.count == w.segment.count, "segments of \(spliced.segment.count) and \(w.segment.count) bytes")
        // v's page is small: only because y's destruction leaves the chunk's parity unable to rebuild any byte of it
        // does v's destruction stand.
        let chunk = { (offset: Int) in offset / ChunkParity.dataLength }
        try #require(chunk(y.segment.lowerBound) == chunk(v.segment.upperBound), "y and v in one chunk")

        let tag = try older.bytes((before.pageBox.upperBound - 16)..<before.pageBox.upperBound, at: olderPath)
        try map.destroy((y.segment.lowerBound + RecordV3.segmentHeaderSize)..<y.segment.upperBound, at: path)
        try map.write(tag, at: y.pageBox.upperBound - 16, to: path)
        try map.destroy(try #require(map.headsBoxes[y.record]), at: path)
        try map.write(try older.bytes(spliced.segment, at: olderPath), at: w.segment.lowerBound, to: path)
        try map.destroy(try #require(map.headsBoxes[w.record]), at: path)
        // The second loss: v's page destroyed, its real tag kept.
        try map.destroy((v.segment.lowerBound + RecordV3.segmentHeaderSize)..<(v.pageBox.upperBound - 16), at: path)
        #expect(throws: KeychainError.self, "a plain open refuses the file") { _ = try V3Keychain.open(path) }

        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        let served = try liveSecrets(recovered)
        #expect(served["x"] == nil, "x, deleted, is served again as \(served["x"].map { String(decoding: $0, as: UTF8.self) } ?? "")")
        #expect(served == ["a": Array("a-value".utf8)], "y, w and v are lost, a is whole")
        let damage = recovered.recovery?.damage ?? []
        #expect(damage.contains { $0.itemID == x && $0.loss == .conflict }, "x is named: \(damage)")

        let report = try Keychain.salvage(from: path, credential: TestKeychain.password, to: directory.file("salvaged.kcf"))
        #expect(report.damages.contains { $0.itemID == x })
        #expect(try liveSecrets(V3Keychain.open(directory.file("salvaged.kcf"))) == served, "salvage writes what was served")
    }
}
