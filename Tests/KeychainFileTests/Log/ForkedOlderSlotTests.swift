import Foundation
import Testing
@testable import KeychainFile

/// The older commit slot against a keyless attacker who holds another copy of the file (SPEC.md §25.3): that copy's
/// newest slot reads in this file's older slot's place as well as this file's own, so its head confirms nothing.
@Suite("A recovering read against another copy's commit slot put in the older slot's place")
struct ForkedOlderSlotTests {
    typealias Forked = ForkedCommitRecoveryTests
    typealias Link = ForkedCommitLinkTests

    /// The healing log of `keychain`, of format version `version`.
    static func healingLog(_ keychain: Keychain, version: Int) throws -> HealingLog {
        version == 3 ? try V3Keychain.log(keychain).state.log : try V2Keychain.log(keychain).state.log
    }

    /// The file offset of the commit slot of `keychain`'s newest commit, and its length.
    static func newestSlot(of keychain: Keychain, version: Int) throws -> Range<Int> {
        let seal = try #require(try healingLog(keychain, version: version).newest?.seal)
        let logical = HealingLayout.slotOffsets[Int(seal.counter % 2)]
        let offset = version == 3
            ? HeaderRunShiftedFileHandle.physical(logical, pageCount: try V3Keychain.log(keychain).state.pageCount) : logical
        return offset..<(offset + CommitSlot.length)
    }

    /// The acknowledged file: after the fork, x updated with a large secret (commit 1), then a updated (commit 2). The
    /// fork: x updated or deleted (one commit). The attack puts the fork's record and its newest slot — in this file's
    /// older slot's place — over the acknowledged file, destroys the rest of commit 1 but its chain tag, and keeps
    /// commit 2. The older slot's head agrees with the fork's record; it must not confirm it.
    @Test("Another copy's slot and record in place, then destroyed bytes, then the acknowledged commit: the other copy's change is named", arguments: [2, 3], [false, true])
    func otherCopysSlotThenGapThenRealTail(version: Int, forkDeletes: Bool) throws {
        try Link.forkedCommitThenGapThenRealTail(version: version, forkDeletes: forkDeletes, copyForkSlot: true)
    }

    /// As above without destroyed bytes: both copies commit twice, and the attack puts the fork's records and its
    /// older slot over the acknowledged file's. The records end with another head than the newest slot names: what
    /// they changed after the older slot's end is taken back; what they changed before it — the older slot being the
    /// fork's — is named unconfirmed: x, changed only before it, kept; a and z, changed on both sides (z's add
    /// included), put back as the fork's first commit left them.
    @Test("Another copy's older slot and records to the end: what was changed before the older slot's end is named too", arguments: [2, 3])
    func otherCopysSlotAndRecordsToTheEnd(version: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("current.kcf")
        let (keychain, forkPath, start) = try Link.forked(version: version, in: directory)
        func commit(_ keychain: Keychain, _ changes: [(String, String)]) throws {
            try keychain.batch { (batch) throws(KeychainError) in
                for (account, value) in changes {
                    try batch.update(.genericPassword(service: "svc", account: account), setting: [:], secret: Array(value.utf8))
                }
            }
        }
        try commit(keychain, [("x", "x-value-2"), ("a", "a-value-2")])
        try commit(keychain, [("z", "z-value-2"), ("a", "a-value-5")])
        let fork = try Keychain.open(at: forkPath, credential: TestKeychain.password)
        try commit(fork, [("x", "x-value-3"), ("a", "a-value-3")])
        try commit(fork, [("z", "z-value-3"), ("a", "a-value-4")])
        let end = try Link.logEnd(keychain, version: version)
        try #require(try Link.logEnd(fork, version: version) == end)
        let newestSlot = try Self.newestSlot(of: keychain, version: version)
        try #require(newestSlot == (try Self.newestSlot(of: fork, version: version)))
        let (x, z, a) = (try Link.id(of: "x", in: keychain), try Link.id(of: "z", in: keychain), try Link.id(of: "a", in: keychain))

        // Every log byte that differs is the fork's (its parity too), and so is every byte of the older slot.
        var current = try fileBytes(path)
        let forked = try fileBytes(forkPath)
        try #require(current.count == forked.count)
        let logStart = try Forked.logStart(of: keychain, version: version)
        let slots = (0..<logStart).filter { !newestSlot.contains($0) && current[$0] != forked[$0] }
        try #require(!slots.isEmpty, "the older slots differ")
        for offset in slots + Array(logStart..<current.count) { current[offset] = forked[offset] }
        try writeFileBytes(current, to: path)
        #expect(throws: KeychainError.self, "a plain open refuses the file") { _ = try Keychain.open(at: path, credential: TestKeychain.password) }

        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        let damage = recovered.recovery?.damage ?? []
        func named(_ id: ItemID, _ loss: Damage.Loss) -> Bool { damage.contains { $0.itemID == id && $0.loss == loss } }
        // z was added after the last rewrite, before the older slot's end, and updated after it: taken back to its add.
        #expect(named(z, .conflict) && named(z, .unconfirmed), "z, changed after the older slot's end, is taken back: \(damage)")
        #expect(named(x, .unconfirmed) && !named(x, .conflict), "x, changed before it, is named: \(damage)")
        #expect(named(a, .conflict) && named(a, .unconfirmed), "a, changed on both sides, is taken back to a version nothing confirms: \(damage)")
        let served = try liveSecrets(recovered)
        #expect(served == ["x": Array("x-value-3".utf8), "z": Array("z-value-1".utf8), "a": Array("a-value-3".utf8)])
    }
}
