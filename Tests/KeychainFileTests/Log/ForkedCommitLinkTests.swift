import Foundation
import Testing
@testable import KeychainFile

/// The fork check of a recovering read (SPEC.md §25.3) against a keyless attacker who holds another copy of the file,
/// forked from the same commit, and who also destroys bytes: a head confirms only records linked to it by records
/// that verified. What was changed before a link that cannot be checked — a record that does not verify, bytes
/// skipped — is named ``Damage/Loss/unconfirmed``, never served unsaid.
@Suite("A recovering read against another copy's records whose link to the acknowledged ones is destroyed")
struct ForkedCommitLinkTests {
    typealias Forked = ForkedCommitRecoveryTests

    /// The end of the written log of `keychain`, a logical log offset.
    static func logEnd(_ keychain: Keychain, version: Int) throws -> Int {
        version == 3 ? try V3Keychain.log(keychain).state.log.writtenEnd : try V2Keychain.log(keychain).state.log.writtenEnd
    }

    /// Where logical log offset `logical` of `keychain`'s file lies in the file.
    static func physical(_ logical: Int, of keychain: Keychain, version: Int) throws -> Int {
        guard version == 3 else { return HealingLayout.physical(logical) }
        return HeaderRunShiftedFileHandle.physical(HealingLayout.physical(logical), pageCount: try V3Keychain.log(keychain).state.pageCount)
    }

    /// The keychain after a, x and z are added (x and z in group B), with a copy of its file at "fork.kcf", and the log's end.
    static func forked(version: Int, in directory: TemporaryDirectory) throws -> (keychain: Keychain, forkPath: String, end: Int) {
        let keychain = try Forked.create(version: version, in: directory)
        try keychain.add(Forked.item("a", "a-value", version: version, group: KeychainV3GroupTests.groupA))
        try keychain.add(Forked.item("x", "x-value-1", version: version, group: KeychainV3GroupTests.groupB))
        try keychain.add(Forked.item("z", "z-value-1", version: version, group: KeychainV3GroupTests.groupB))
        let forkPath = directory.file("fork.kcf")
        try writeFileBytes(try fileBytes(directory.file("current.kcf")), to: forkPath)
        return (keychain, forkPath, try logEnd(keychain, version: version))
    }

    static func id(of account: String, in keychain: Keychain) throws -> ItemID {
        try #require(try keychain.search(.genericPassword(service: "svc", account: account), returning: .persistentReference).first?.persistentReference?.itemID)
    }

    /// Updates x to `value` and adds 150 items in one commit, so that it spans several pages.
    static func bulkCommit(_ keychain: Keychain, x value: String, version: Int) throws {
        try keychain.batch { (batch) throws(KeychainError) in
            try batch.update(.genericPassword(service: "svc", account: "x"), setting: [:], secret: Array(value.utf8))
            for number in 0..<150 {
                try batch.add(Forked.item("bulk-\(number)-" + String(repeating: "b", count: 60), "bulk", version: version, group: KeychainV3GroupTests.groupB))
            }
        }
    }

    /// The attack of `acknowledgedTagWrittenBack`, with no key: every byte of the fork's bulk commit but its chain
    /// tag (parity is not copied) put over the acknowledged one; when `thenUpdateA`, the acknowledged file updated a
    /// after that commit. The directory, the file's path and the acknowledged keychain.
    static func tagWrittenBack(version: Int, thenUpdateA: Bool) throws -> (TemporaryDirectory, String, Keychain) {
        let directory = TemporaryDirectory()
        let path = directory.file("current.kcf")
        let (keychain, forkPath, start) = try Self.forked(version: version, in: directory)
        try Self.bulkCommit(keychain, x: "x-value-2", version: version)
        let end = try Self.logEnd(keychain, version: version)
        if thenUpdateA { try keychain.update(.genericPassword(service: "svc", account: "a"), setting: [:], secret: Array("a-value-2".utf8)) }
        let fork = try Keychain.open(at: forkPath, credential: TestKeychain.password)
        try Self.bulkCommit(fork, x: "x-value-3", version: version)
        try #require(try Self.logEnd(fork, version: version) == end, "both commits end at log byte \(end)")
        var current = try fileBytes(path)
        let forked = try fileBytes(forkPath)
        for logical in start..<(end - 16) {
            let offset = try Self.physical(logical, of: keychain, version: version)
            current[offset] = forked[offset]
        }
        try writeFileBytes(current, to: path)
        return (directory, path, keychain)
    }

    /// The fork's commit put over the acknowledged one byte for byte, but for the last 16: the chain tag, which stays
    /// the acknowledged one, so that the records end with the head the newest commit slot names.
    @Test("Another copy's commit with the acknowledged chain tag written back: what it changed is named unconfirmed, not served unsaid", arguments: [2, 3])
    func acknowledgedTagWrittenBack(version: Int) throws {
        let (directory, path, keychain) = try Self.tagWrittenBack(version: version, thenUpdateA: false)
        let x = try Self.id(of: "x", in: keychain)
        // A plain open sets the newest commit's last write aside (SPEC.md §25.4 rule 2): it serves x as before it.
        let plain = try Keychain.open(at: path, credential: TestKeychain.password)
        let servedPlainly = try liveSecrets(plain)
        #expect(plain.tornTail != nil && servedPlainly["x"] == Array("x-value-1".utf8))

        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        let damage = recovered.recovery?.damage ?? []
        #expect(damage.contains { $0.itemID == x && $0.loss == .unconfirmed }, "x, changed by records no head confirms, is named: \(damage)")
        let served = try liveSecrets(recovered)
        #expect(served["a"] == Array("a-value".utf8) && served["z"] == Array("z-value-1".utf8))
        // a was added before the fork. In version 3 adding group B rewrote the file after that, so a is in the rewrite,
        // which no other copy holds: it is confirmed. In version 2 a was added after the last rewrite, by records
        // that end where the older commit slot's head agrees — which confirms nothing, since another copy's older
        // slot reads there as well — so a is named too.
        let aIsNamed = damage.contains { $0.loss == .unconfirmed && $0.itemID != nil && (try? Self.id(of: "a", in: recovered)) == $0.itemID }
        #expect(aIsNamed == (version == 2), "a is named: \(aIsNamed)")
        withExtendedLifetime(directory) {}
    }

    /// The fork's commit, shorter than the acknowledged one, put over its start; the rest of the acknowledged commit
    /// destroyed (past what parity repairs) but for its chain tag; the acknowledged commit after it, which updates a
    /// (in version 3, in group A, whose chain the destroyed bytes do not cross), kept. A recovering
    /// read steps over the destroyed bytes to that commit, which verifies after the tag and ends with the newest slot's
    /// head: it confirms itself, not the fork's commit before the destroyed bytes.
    @Test("Another copy's commit, then destroyed bytes, then the acknowledged commit after: the agreeing head does not confirm the fork's commit", arguments: [2, 3])
    func forkedCommitThenGapThenRealTail(version: Int) throws {
        try Self.forkedCommitThenGapThenRealTail(version: version, forkDeletes: false)
    }

    /// As above, with the fork's commit deleting x: x is not listed, and is named.
    @Test("Another copy's deletion, then destroyed bytes, then the acknowledged commit after: the deleted item is named, though not listed", arguments: [2, 3])
    func forkedDeletionThenGapThenRealTail(version: Int) throws {
        try Self.forkedCommitThenGapThenRealTail(version: version, forkDeletes: true)
    }

    /// - Parameter copyForkSlot: the fork's newest commit slot is put in this file's older slot's place too
    ///   (``ForkedOlderSlotTests``).
    static func forkedCommitThenGapThenRealTail(version: Int, forkDeletes: Bool, copyForkSlot: Bool = false) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("current.kcf")
        let (keychain, forkPath, start) = try Self.forked(version: version, in: directory)
        try keychain.update(.genericPassword(service: "svc", account: "x"), setting: [:], secret: [UInt8](repeating: 2, count: 12_000))
        let acknowledgedEnd = try Self.logEnd(keychain, version: version)
        try keychain.update(.genericPassword(service: "svc", account: "a"), setting: [:], secret: Array("a-value-2".utf8))
        let fork = try Keychain.open(at: forkPath, credential: TestKeychain.password)
        if forkDeletes {
            try fork.delete(.genericPassword(service: "svc", account: "x"))
        } else {
            try fork.update(.genericPassword(service: "svc", account: "x"), setting: [:], secret: Array("x-value-3".utf8))
        }
        let forkEnd = try Self.logEnd(fork, version: version)
        try #require(acknowledgedEnd - 16 - forkEnd >= 4_400, "the fork's commit ends at \(forkEnd), the acknowledged one at \(acknowledgedEnd)")
        let (x, a) = (try Self.id(of: "x", in: keychain), try Self.id(of: "a", in: keychain))

        var current = try fileBytes(path)
        let forked = try fileBytes(forkPath)
        if copyForkSlot {
            let forkSlot = try ForkedOlderSlotTests.newestSlot(of: fork, version: version)
            try #require(forkSlot != (try ForkedOlderSlotTests.newestSlot(of: keychain, version: version)), "the fork's newest slot lies where this file's older one does")
            for offset in forkSlot { current[offset] = forked[offset] }
        }
        for logical in start..<forkEnd {
            let offset = try Self.physical(logical, of: keychain, version: version)
            current[offset] = forked[offset]
        }
        for logical in forkEnd..<(acknowledgedEnd - 16) { current[try Self.physical(logical, of: keychain, version: version)] ^= 0xA5 }
        try writeFileBytes(current, to: path)
        if copyForkSlot {
            // The fork's slot says where the newest commit's last write begins: a plain open sets the rest aside, and
            // says so (SPEC.md §25.4 rule 2) — as it would a whole older copy of the file put in place, unsaid.
            #expect(try Keychain.open(at: path, credential: TestKeychain.password).tornTail != nil)
        } else {
            #expect(throws: KeychainError.self, "a plain open refuses the file") { _ = try Keychain.open(at: path, credential: TestKeychain.password) }
        }

        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        let damage = recovered.recovery?.damage ?? []
        #expect(damage.contains { $0.itemID == x && $0.loss == .unconfirmed }, "x, changed before the destroyed bytes, is named: \(damage)")
        #expect(!damage.contains { $0.itemID == a }, "a, changed after them by records the newest head confirms, is not named")
        #expect(damage.contains { if case .region = $0.loss { true } else { false } }, "the destroyed bytes are listed")
        let served = try liveSecrets(recovered)
        #expect(served["a"] == Array("a-value-2".utf8) && served["z"] == Array("z-value-1".utf8))
        if forkDeletes { #expect(served["x"] == nil, "the fork's deletion is kept, and named") }

        let report = try Keychain.salvage(from: path, credential: TestKeychain.password, to: directory.file("salvaged.kcf"))
        #expect(report.damages.contains { $0.itemID == x && $0.loss == .unconfirmed }, "salvage names x as well")
    }

    /// Version 3: the fork's commit puts x with a large secret, whose box the attacker then destroys past what parity
    /// repairs; the record's chain tag still matches, so its head is proven, and it disagrees with the newest slot's.
    /// What the record changed is taken back — and x, whose version there was lost, stays out as its report says,
    /// never listed at the version before.
    @Test("Another copy's commit whose put of x lost its secret box: taken back, and x stays out, as its report says")
    func takenBackItemStaysOut() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("current.kcf")
        let (keychain, forkPath, _) = try Self.forked(version: 3, in: directory)
        try keychain.update(.genericPassword(service: "svc", account: "x"), setting: [:], secret: [UInt8](repeating: 2, count: 12_000))
        let fork = try Keychain.open(at: forkPath, credential: TestKeychain.password)
        try fork.update(.genericPassword(service: "svc", account: "x"), setting: [:], secret: [UInt8](repeating: 3, count: 12_000))
        let map = try V3LogMap(fork)
        let x = try Self.id(of: "x", in: keychain)
        let put = try #require(map.pages.last?.puts.first { $0.id == x })

        // The attack, with no key: every log byte that differs is the fork's, then x's box destroyed.
        try Forked.copyLogDifferences(from: forkPath, to: path, of: keychain, version: 3)
        try map.destroy((put.box.lowerBound + 12)..<(put.box.upperBound - 16), at: path)

        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        let damage = recovered.recovery?.damage ?? []
        #expect(damage.contains { $0.itemID == x && $0.loss == .item }, "x's lost version is reported: \(damage)")
        #expect(damage.contains { $0.itemID == x && $0.loss == .conflict }, "x is named as taken back: \(damage)")
        let served = try liveSecrets(recovered)
        #expect(served["x"] == nil, "x is served at the version before, though its report says it is left out")
        #expect(served["a"] == Array("a-value".utf8) && served["z"] == Array("z-value-1".utf8))
    }

    /// As `acknowledgedTagWrittenBack`, with one more acknowledged commit after it (a's update, kept). The fork's
    /// record does not compute the tag written back, so the tag it computes does not stand for it: the next
    /// record's chain tag matches after the tag written back, not after that one. The link stays unproven there.
    @Test("Another copy's commit with the acknowledged tag written back, then the acknowledged commit after: the link stays unproven", arguments: [2, 3])
    func acknowledgedTagWrittenBackThenCommit(version: Int) throws {
        let (directory, path, keychain) = try Self.tagWrittenBack(version: version, thenUpdateA: true)
        let (x, a) = (try Self.id(of: "x", in: keychain), try Self.id(of: "a", in: keychain))

        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        let damage = recovered.recovery?.damage ?? []
        #expect(damage.contains { $0.itemID == x && $0.loss == .unconfirmed }, "x, changed by the fork's commit, is named: \(damage)")
        #expect(!damage.contains { $0.itemID == a }, "a, changed after the link by a record the newest head confirms, is not named: \(damage)")
        let served = try liveSecrets(recovered)
        #expect(served["a"] == Array("a-value-2".utf8) && served["x"] == Array("x-value-3".utf8))
        withExtendedLifetime(directory) {}
    }
}
