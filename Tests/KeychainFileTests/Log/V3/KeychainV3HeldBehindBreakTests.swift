import Foundation
import Testing
@testable import KeychainFile

/// A version 3 page held past damage to its group's chain (SPEC.md §37.6 rule 4) and applied only when a later
/// commit's heads confirm it, after an unproven link in between (§25.3): what it changed counts where it was read,
/// before that link, so it is named unconfirmed, though it is applied after the link.
@Suite("Format version 3: a held page confirmed after an unproven link")
struct KeychainV3HeldBehindBreakTests {
    static let groupA = KeychainV3GroupTests.groupA
    static let groupB = KeychainV3GroupTests.groupB

    @Test("x's update, held behind B's lost page and confirmed by heads after a record whose link is unproven, is named; z's later update is not")
    func heldPageConfirmedAfterBreak() throws {
        let directory = TemporaryDirectory()
        let keychain = try V3Keychain.create(in: directory)
        let path = directory.file("v3.kcf")
        try keychain.add(GenericPassword(service: "svc", account: "a", accessGroup: Self.groupA, value: Array("a-value".utf8)))
        try keychain.add(GenericPassword(service: "svc", account: "x", accessGroup: Self.groupB, value: Array("x-value-1".utf8)))
        try keychain.add(GenericPassword(service: "svc", account: "z", accessGroup: Self.groupA, value: Array("z-value-1".utf8)))
        try keychain.add(GenericPassword(service: "svc", account: "big", accessGroup: Self.groupB, value: [UInt8](repeating: 7, count: 14_000)))
        try keychain.update(.genericPassword(service: "svc", account: "x"), setting: [:], secret: Array("x-value-2".utf8))
        try keychain.update(.genericPassword(service: "svc", account: "a"), setting: [:], secret: [UInt8](repeating: 5, count: 6_000))
        try keychain.update(.genericPassword(service: "svc", account: "z"), setting: [:], secret: Array("z-value-2".utf8))
        let (x, z, big) = (try KeychainV3HeldOrderTests.id(keychain, "x"), try KeychainV3HeldOrderTests.id(keychain, "z"), try KeychainV3HeldOrderTests.id(keychain, "big"))
        let a = try KeychainV3HeldOrderTests.id(keychain, "a")
        let map = try V3LogMap(keychain)

        // B's page holding big is lost, with its commit's heads: x's update after it (page P) opens past damage to
        // B's chain and is held. P's commit's heads are destroyed (all but their tag), so they do not confirm it.
        let lost = try KeychainV3HeldOrderTests.loseBigPage(map, big: big, at: path)
        let held = try #require(map.pages(of: Self.groupB).last { $0.puts.contains { $0.id == x } })
        let heldHeads = try #require(map.headsBoxes[held.record])
        try map.destroy((heldHeads.lowerBound + 12)..<(heldHeads.upperBound - 16), at: path)
        // The next commit, a's update (record Q): its frame check destroyed, so its link to what follows is unproven,
        // and its heads too; a's secret box destroyed, past what parity repairs in the chunk.
        let updateOfA = try #require(map.pages.last { $0.puts.contains { $0.id == a } })
        try #require(updateOfA.record == held.record + 1, "a's update is the commit after x's")
        let q = map.records[updateOfA.record]
        try map.destroy((q.lowerBound + RecordV3.frameCheckOffset)..<(q.lowerBound + RecordV3.frameCheckOffset + RecordV3.frameCheckSize), at: path)
        let qHeads = try #require(map.headsBoxes[updateOfA.record])
        try map.destroy((qHeads.lowerBound + 12)..<(qHeads.upperBound - 16), at: path)
        let box = try #require(updateOfA.puts.first { $0.id == a }?.box)
        try map.destroy((box.lowerBound + 100)..<(box.lowerBound + 4_500), at: path)
        // z's update, the last commit: its heads confirm P, which is applied then — after Q's unproven link.
        let updateOfZ = try #require(map.pages.last { $0.puts.contains { $0.id == z } })
        try #require(updateOfZ.record == updateOfA.record + 1 && updateOfZ.record == map.records.count - 1)
        try KeychainV3HeldOrderTests.requireSameChunk([lost.segment, heldHeads, q, box])

        let recovered = try KeychainV3RecoveryTests.openRecovering(path)
        let damage = recovered.recovery?.damage ?? []
        let unconfirmed = Set(damage.compactMap { $0.loss == .unconfirmed ? $0.itemID : nil })
        #expect(unconfirmed.contains(x), "x, changed by P before Q's unproven link, is named: \(damage)")
        #expect(!unconfirmed.contains(z), "z, changed after it, is not")
        #expect(damage.contains { $0.itemID == a && $0.loss == .item }, "a's lost version is reported")
        let served = try liveSecrets(recovered)
        #expect(served["x"] == Array("x-value-2".utf8), "P is applied: heads confirmed it")
        #expect(served["z"] == Array("z-value-2".utf8) && served["a"] == nil && served["big"] == nil)
    }
}
