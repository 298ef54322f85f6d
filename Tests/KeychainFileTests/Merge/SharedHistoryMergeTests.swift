import Foundation
import KeychainTestSupport
import Testing
@testable import KeychainFile

/// A merge without a base given takes the last commit both copies' logs hold as its base (SPEC.md §43.9): copies made
/// by copying the file merge three-way, so that a change made on one side only is taken without a conflict copy.
@Suite("Merging copies by the history their logs share")
struct SharedHistoryMergeTests {
    private func password(_ account: String, _ secret: String) throws -> GenericPassword {
        try GenericPassword(service: "s", account: account, password: secret)
    }

    private func update(_ keychain: Keychain, _ account: String, _ secret: String) throws {
        _ = try keychain.update(.genericPassword(service: "s", account: account), setting: [:], secret: Array(secret.utf8))
    }

    private func secret(_ keychain: Keychain, _ account: String) throws -> String? {
        guard let found = try? keychain.search(.genericPassword(service: "s", account: account), returning: [.data]) else { return nil }
        return found.first?.value.map { String(decoding: $0, as: UTF8.self) }
    }

    private func entries(_ keychain: Keychain) throws -> [ItemID: MergeEntry] {
        try keychain.mergeSide().entries
    }

    /// The end of the records `keychain`'s log applied (`E`, SPEC.md §25.2).
    private func logEnd(_ keychain: Keychain) throws -> Int {
        try keychain.withRead { () throws(KeychainError) -> Int in keychain.log.end }
    }

    /// A keychain of `formatVersion` holding `accounts`, each added in a commit of its own, and a byte copy of it.
    private func forked(
        _ directory: TemporaryDirectory, formatVersion: Int, accounts: [String] = ["keep", "change", "remove", "both"]
    ) throws -> (ours: Keychain, theirs: Keychain) {
        let ours = try TestKeychain.create(in: directory, name: "ours.kcf", formatVersion: formatVersion)
        for account in accounts { try ours.add(try password(account, "\(account)-0")) }
        try writeFileBytes(try fileBytes(directory.file("ours.kcf")), to: directory.file("theirs.kcf"))
        return (ours, try Keychain.open(at: directory.file("theirs.kcf"), credential: TestKeychain.password))
    }

    @Test("Copies forked from one file: a change on one side only is taken, one on both keeps a conflict copy; the result is the three-way merge with the fork as base", arguments: [2, 3])
    func forkedCopiesMergeThreeWay(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let (ours, theirs) = try forked(directory, formatVersion: formatVersion)
        let fork = try entries(ours)
        let forkEnd = try logEnd(ours)
        try update(ours, "keep", "ours")
        _ = try ours.delete(.genericPassword(service: "s", account: "remove"))
        try update(ours, "both", "both-ours")
        try update(theirs, "change", "theirs")
        try theirs.add(try password("added-there", "t"))
        Thread.sleep(forTimeInterval: 0.005)
        try update(theirs, "both", "both-theirs")
        let expected = try CopyMerger.merge(ours: try entries(ours), theirs: try entries(theirs), base: fork).result

        let report = try ours.merge(from: theirs)
        #expect(report.sharedHistoryEnd == forkEnd)
        #expect(report.conflicts.map(\.kind) == [.changedOnBothSides], "only \"both\" changed on both sides: \(report.conflicts)")
        let reopened = try Keychain.open(at: directory.file("ours.kcf"), credential: TestKeychain.password)
        let written = try entries(reopened)
        #expect(MergeHistory.same(written, expected), "\(MergeHistory.difference(written, expected))")
        for (account, value) in [("keep", "ours"), ("change", "theirs"), ("added-there", "t"), ("both", "both-theirs")] {
            #expect(try secret(reopened, account) == value, "\(account)")
        }
        #expect(try secret(reopened, "remove") == nil)
        let copies = try reopened.conflictCopies()
        #expect(copies.count == 1)
        #expect(try copies.first.map { try reopened.secret(for: PersistentReference(itemID: $0.copyID)) } == Array("both-ours".utf8))

        // The other way round: the same items and tombstones (the last commit both hold is the same).
        let back = try theirs.merge(from: reopened)
        #expect(back.sharedHistoryEnd != nil)
        let (left, right) = (try entries(theirs), written)
        #expect(MergeHistory.same(left, right), "\(MergeHistory.difference(left, right))")
        // And again: nothing to write either way.
        #expect(try reopened.merge(from: theirs).isUnchanged)
        #expect(try theirs.merge(from: reopened).isUnchanged)
    }

    @Test("An item added on one copy, merged into the other and deleted there, stays deleted when the first copy is merged again", arguments: [2, 3])
    func deletionAfterAMergedAdditionHolds(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let (ours, theirs) = try forked(directory, formatVersion: formatVersion)
        let forkEnd = try logEnd(ours)
        try theirs.add(try password("short-lived", "x"))
        _ = try ours.merge(from: theirs)
        #expect(try secret(ours, "short-lived") == "x")
        Thread.sleep(forTimeInterval: 0.005)
        _ = try ours.delete(.genericPassword(service: "s", account: "short-lived"))

        // The logs part at the fork: against it, ours deleted an item theirs added. Both changed it; the deletion is
        // the later, and this copy made it after it had the item (§43.9: §43.3's rules where both sides changed).
        let again = try ours.merge(from: theirs)
        #expect(again.sharedHistoryEnd == forkEnd)
        #expect(again.conflicts.isEmpty, "\(again.conflicts)")
        #expect(try secret(ours, "short-lived") == nil)
        let back = try theirs.merge(from: ours)
        #expect(back.conflicts.isEmpty, "\(back.conflicts)")
        #expect(try secret(theirs, "short-lived") == nil)
    }

    @Test("An unchanged older copy changes nothing when merged in, and takes every change when merged into, with no conflict copy", arguments: [2, 3])
    func olderCopy(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let (ours, older) = try forked(directory, formatVersion: formatVersion)
        let forkEnd = try logEnd(older)
        try update(ours, "change", "1")
        try update(ours, "both", "2")
        _ = try ours.delete(.genericPassword(service: "s", account: "remove"))
        try ours.add(try password("new", "3"))

        let head = ours.head
        let report = try ours.merge(from: older)
        #expect(report.holdsEverything && report.conflicts.isEmpty, "\(report)")
        #expect(report.sharedHistoryEnd == forkEnd)
        #expect(ours.head == head)

        let forward = try older.merge(from: ours)
        #expect(forward.conflicts.isEmpty && forward.overruled.isEmpty, "\(forward)")
        #expect(forward.sharedHistoryEnd == forkEnd)
        #expect(try older.conflictCopies().isEmpty)
        let (left, right) = (try entries(older), try entries(ours))
        #expect(MergeHistory.same(left, right), "\(MergeHistory.difference(left, right))")
    }

    @Test("A copy compacted since the fork shares no history: §43.3's rules, by times, keep the older version as a conflict copy", arguments: [2, 3])
    func compactedCopySharesNothing(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let (ours, theirs) = try forked(directory, formatVersion: formatVersion)
        try update(theirs, "change", "theirs")
        _ = try theirs.compact()
        let expected = try CopyMerger.merge(ours: try entries(ours), theirs: try entries(theirs), base: nil).result

        let report = try ours.merge(from: theirs)
        #expect(report.sharedHistoryEnd == nil)
        #expect(report.conflicts.map(\.kind) == [.changedOnBothSides])
        let written = try entries(ours)
        #expect(MergeHistory.same(written, expected), "\(MergeHistory.difference(written, expected))")
        #expect(try secret(ours, "change") == "theirs")
    }

    @Test("A copy written over in place after its keychain read it (cp, rsync --inplace) shares no history: its file's bytes are not taken for the copy's", arguments: [2, 3])
    func copyWrittenOverInPlace(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let (ours, theirs) = try forked(directory, formatVersion: formatVersion)
        try update(ours, "keep", "ours")
        try update(theirs, "change", "theirs")
        try theirs.add(try password("t1", "1"))
        // What a merge reads of each copy with its items, then — as another program may between two reads of one
        // merge — ours's bytes written over theirs's file, in place (the same inode).
        let ourHistory = try #require(try ours.withRead { () throws(KeychainError) in ours.log.copyHistory })
        let theirHistory = try #require(try theirs.withRead { () throws(KeychainError) in theirs.log.copyHistory })
        #expect(CopyHistory.divergence(of: ourHistory, and: theirHistory) != nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory.file("theirs.kcf")))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(try fileBytes(directory.file("ours.kcf"))))
        try handle.close()

        // The file now reads as holding all of ours: the shared state would be ours itself, and every item would take
        // the version theirs's keychain read. The last record that keychain verified is not in the file: no history.
        #expect(CopyHistory.divergence(of: ourHistory, and: theirHistory) == nil)
        #expect(CopyHistory.divergence(of: theirHistory, and: ourHistory) == nil)
    }

    @Test("Damage in the other copy's log ends the shared history at the commit before it: the base is earlier, the result still three-way")
    func damageEndsTheSharedHistoryEarly() throws {
        let directory = TemporaryDirectory()
        let ours = try TestKeychain.create(in: directory, name: "ours.kcf", formatVersion: 2)
        try ours.add(try password("a", "a-0"))
        try ours.add(try password("b", "b-0"))
        let secondEnd = try logEnd(ours)
        try ours.add(try password("c", "c-0"))
        let forkEnd = try logEnd(ours)
        try writeFileBytes(try fileBytes(directory.file("ours.kcf")), to: directory.file("theirs.kcf"))
        let theirs = try Keychain.open(at: directory.file("theirs.kcf"), credential: TestKeychain.password)
        try update(theirs, "b", "theirs")
        // One byte of the third record flipped on disk: parity repairs it when the copy is read, but the file's bytes
        // differ from ours's there until a write puts the repair back.
        var bytes = try fileBytes(directory.file("theirs.kcf"))
        bytes[HealingLayout.physical(secondEnd + 40)] ^= 0x10
        try writeFileBytes(bytes, to: directory.file("theirs.kcf"))
        let damaged = try Keychain.open(at: directory.file("theirs.kcf"), credential: TestKeychain.password)
        #expect(!damaged.repairs.chunks.isEmpty, "the copy's read repaired the flipped byte")
        try update(ours, "a", "ours")

        let report = try ours.merge(from: damaged)
        #expect(report.sharedHistoryEnd == secondEnd, "the last commit before the damage, not \(forkEnd)")
        #expect(report.conflicts.isEmpty, "\(report.conflicts)")
        #expect(try secret(ours, "a") == "ours")
        #expect(try secret(ours, "b") == "theirs")
        #expect(try secret(ours, "c") == "c-0")
        #expect(try ours.conflictCopies().isEmpty)
    }

    @Test("An earlier state that ends inside a transaction in parts is the last commit before it; one inside a rewrite's records is none", arguments: [2, 3])
    func earlierStateStopsAtACommit(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: formatVersion)
        try keychain.add(try password("first", "1"))
        let before = try logEnd(keychain)
        let large = String(repeating: "Z", count: 1 << 20)
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<17 { try batch.add(try GenericPassword(service: "big", account: "\(index)", password: large)) }
        }
        let after = try logEnd(keychain)
        #expect(after - before > RecordLogV2.partLimit, "the batch was written in parts")
        let log = keychain.log
        for limit in [before, before + 1, before + (after - before) / 2, after - 1] {
            let earlier = try keychain.withRead { () throws(KeychainError) in try log.replayEarlierState(endingBy: limit) }
            #expect(earlier.end == before, "limit \(limit)")
            #expect(earlier.index.count == 1, "limit \(limit): only the first commit's item")
        }
        let whole = try keychain.withRead { () throws(KeychainError) in try log.replayEarlierState(endingBy: after) }
        #expect(whole.end == after && whole.index.count == 18)

        // After a compaction the rewrite's records come first; a limit inside them ends no commit at or past the
        // rewrite end, so no earlier state is shared there (§43.9 rule 3).
        _ = try keychain.compact()
        let rewritten = keychain.log
        guard let history = try keychain.withRead({ () throws(KeychainError) in rewritten.copyHistory }) else {
            Issue.record("no history after a compaction")
            return
        }
        let inside = try keychain.withRead { () throws(KeychainError) in try rewritten.replayEarlierState(endingBy: history.rewriteEnd - 1) }
        #expect(inside.end < history.rewriteEnd)
    }
}
