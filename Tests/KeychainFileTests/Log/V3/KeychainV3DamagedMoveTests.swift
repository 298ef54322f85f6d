import Foundation
import Testing
@testable import KeychainFile

/// A move between groups read past damage (SPEC.md §37.6): the move's deletion in its old group lost with its page,
/// and its put in the new group with its secret box. The put cannot have moved the item out of a group whose page
/// did not say so (§36), so the item is kept where it is live, and named — not taken out as a lost put alone is.
@Suite("Format version 3: a move whose deletion page and put's secret box are both lost")
struct KeychainV3DamagedMoveTests {
    static let groupA = KeychainV3GroupTests.groupA
    static let groupB = KeychainV3GroupTests.groupB

    @Test("The item stays in its old group at its old version, named a conflict and its lost version reported")
    func lostMove() throws {
        let directory = TemporaryDirectory()
        let keychain = try V3Keychain.create(in: directory)
        let path = directory.file("v3.kcf")
        try keychain.add(GenericPassword(service: "svc", account: "a", accessGroup: Self.groupA, value: Array("a-value".utf8)))
        try keychain.add(GenericPassword(service: "svc", account: "x", accessGroup: Self.groupB, value: Array("x-value-1".utf8)))
        _ = try keychain.update(
            .genericPassword(service: "svc", account: "x"), setting: [.accessGroup: .string(Self.groupA)], secret: [UInt8](repeating: 2, count: 12_000))
        let x = try KeychainV3HeldOrderTests.id(keychain, "x")
        let map = try V3LogMap(keychain)
        let put = try #require(map.pages.last { $0.puts.contains { $0.id == x } })
        let deletion = try #require(map.pages.last { $0.record == put.record && $0.keyID == map.keyIDs[Self.groupB] })
        try #require(put.keyID == map.keyIDs[Self.groupA], "the move's put is in A, its deletion in B, in one commit")
        let box = try #require(put.puts.first { $0.id == x }?.box)
        try KeychainV3HeldOrderTests.requireSameChunk([deletion.segment, box])
        try map.destroy((deletion.segment.lowerBound + RecordV3.segmentHeaderSize)..<(deletion.pageBox.upperBound - 16), at: path)
        try map.destroy((box.lowerBound + 100)..<(box.lowerBound + 4_500), at: path)
        // A plain open sets the move's commit, the last write, aside (SPEC.md §25.4 rule 2).
        #expect(try Keychain.open(at: path, credential: TestKeychain.password).tornTail != nil)

        let recovered = try KeychainV3RecoveryTests.openRecovering(path)
        let served = try recovered.find(GenericPassword.self, matching: .genericPassword(service: "svc", account: "x"))
        #expect(served.map(\.accessGroup) == [Self.groupB] && served.map(\.value) == [Array("x-value-1".utf8)], "x where its deletion left it")
        let damage = recovered.recovery?.damage ?? []
        #expect(damage.contains { $0.itemID == x && $0.loss == .item }, "x's lost version is reported: \(damage)")
        #expect(damage.contains { $0.itemID == x && $0.loss == .conflict }, "x, kept in B, is named: \(damage)")
        #expect(damage.contains { $0.itemID == nil && $0.offset <= map.physical(deletion.segment.upperBound) }, "B's lost page is listed: \(damage)")
        #expect(try liveSecrets(recovered)["a"] == Array("a-value".utf8))
    }

    /// The same damage to another copy's move, put over the acknowledged commit: the records end with another head
    /// than the newest slot names, and what they changed is taken back. The damaged put did not take x out (x is
    /// live in B), so x is put back as it was, in B — not kept out as if the put had removed it.
    @Test("Another copy's damaged move, taken back: x is listed as it was before it, in its old group, and named")
    func lostMoveTakenBack() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("current.kcf")
        let (keychain, forkPath, _) = try ForkedCommitLinkTests.forked(version: 3, in: directory)
        let move = { (keychain: Keychain, fill: UInt8) throws in
            _ = try keychain.update(
                .genericPassword(service: "svc", account: "x"), setting: [.accessGroup: .string(Self.groupA)], secret: [UInt8](repeating: fill, count: 12_000))
        }
        try move(keychain, 2)
        let fork = try Keychain.open(at: forkPath, credential: TestKeychain.password)
        try move(fork, 3)
        let x = try ForkedCommitLinkTests.id(of: "x", in: keychain)
        let map = try V3LogMap(fork)
        let put = try #require(map.pages.last { $0.puts.contains { $0.id == x } })
        let deletion = try #require(map.pages.last { $0.record == put.record && $0.keyID == map.keyIDs[Self.groupB] })
        let box = try #require(put.puts.first { $0.id == x }?.box)
        try KeychainV3HeldOrderTests.requireSameChunk([deletion.segment, box])

        // Every log byte that differs is the fork's, its parity too; then the fork's deletion page and x's box destroyed.
        try ForkedCommitRecoveryTests.copyLogDifferences(from: forkPath, to: path, of: keychain, version: 3)
        try map.destroy((deletion.segment.lowerBound + RecordV3.segmentHeaderSize)..<(deletion.pageBox.upperBound - 16), at: path)
        try map.destroy((box.lowerBound + 100)..<(box.lowerBound + 4_500), at: path)

        let recovered = try KeychainV3RecoveryTests.openRecovering(path)
        let damage = recovered.recovery?.damage ?? []
        #expect(damage.contains { $0.itemID == x && $0.loss == .conflict }, "x is named: \(damage)")
        let served = try recovered.find(GenericPassword.self, matching: .genericPassword(service: "svc", account: "x"))
        #expect(served.map(\.accessGroup) == [Self.groupB] && served.map(\.value) == [Array("x-value-1".utf8)], "x as it was before the fork's move")
    }
}
