import Foundation
import Testing
@testable import KeychainFile

/// Records past a version 2 file's rewrite end, and the commit slots that say whether they were acknowledged
/// (Docs/FormatVersion2.md §3). A new file gets an initial commit slot, so a first add that a crash stopped before
/// its slot leaves a remnant the next write cuts; with no slot readable at all, commits were lost to damage — even
/// when the damage left zeros — and the records are set aside, never cut. Found by the crash trials (a worker
/// killed during the first add to a new keychain).
@Suite("Format version 2 through Keychain: records past the rewrite with no commit slot")
struct KeychainV2NoCommitSlotTests {
    /// A new, empty keychain's bytes, and its bytes after adds of `count` items.
    func emptyThenAdded(_ directory: TemporaryDirectory, count: Int) throws -> (path: String, empty: [UInt8], added: [UInt8]) {
        let keychain = try V2Keychain.create(in: directory)
        let path = directory.file("v2.kcf")
        let empty = try fileBytes(path)
        _ = try V2Keychain.fill(keychain, count: count)
        return (path, empty, try fileBytes(path))
    }

    /// `bytes` with both commit slots overwritten by `fill`.
    func slotsOverwritten(_ bytes: [UInt8], with fill: UInt8) -> [UInt8] {
        var changed = bytes
        for offset in HealingLayout.slotOffsets {
            for index in offset..<(offset + CommitSlot.length) { changed[index] = fill }
        }
        return changed
    }

    @Test("A new keychain whose first add was killed before its commit slot: the next add cuts the remnant and commits")
    func firstAddKilledBeforeItsSlot() throws {
        let directory = TemporaryDirectory()
        let file = try emptyThenAdded(directory, count: 1)
        // The add's record reached the file, its slot did not: the slot places are as the new file left them,
        // one of them holding the new file's initial commit.
        #expect(HealingLayout.slotOffsets.contains { !file.empty[$0..<($0 + CommitSlot.length)].allSatisfy { $0 == 0 } })
        let crashed = file.empty + Array(file.added[HealingLayout.logStart...])
        try writeFileBytes(crashed, to: file.path)
        let keychain = try V2Keychain.open(file.path)
        #expect(keychain.count == 0)
        #expect(keychain.tornTail != nil && keychain.tornTail?.mayHoldAcknowledgedData == false)
        try keychain.add(GenericPassword(service: "svc", account: "after the crash", password: "x"))
        let reopened = try V2Keychain.open(file.path)
        #expect(reopened.tornTail == nil)
        #expect(try liveSecrets(reopened) == ["after the crash": Array("x".utf8)])
    }

    @Test("Acknowledged records whose commit slots were both destroyed are set aside: no write cuts them", arguments: [0xEE, 0x00] as [UInt8])
    func slotsDestroyed(fill: UInt8) throws {
        let directory = TemporaryDirectory()
        let file = try emptyThenAdded(directory, count: 5)
        let damaged = slotsOverwritten(file.added, with: fill)
        try writeFileBytes(damaged, to: file.path)
        let keychain = try V2Keychain.open(file.path)
        #expect(keychain.tornTail?.mayHoldAcknowledgedData == true)
        #expect(throws: KeychainError.self) { try keychain.add(GenericPassword(service: "svc", account: "next", password: "x")) }
        #expect(throws: KeychainError.self) { try keychain.compact() }
        #expect(try fileBytes(file.path) == damaged, "nothing is cut")
    }

    @Test("With both commit slots destroyed, a recovering open and salvage list the records past the rewrite as possibly acknowledged: never dropped unsaid", arguments: [0xEE, 0x00] as [UInt8])
    func slotsDestroyedRecovering(fill: UInt8) throws {
        let directory = TemporaryDirectory()
        let file = try emptyThenAdded(directory, count: 5)
        try writeFileBytes(slotsOverwritten(file.added, with: fill), to: file.path)
        let unread = { (damage: Damage) -> Bool in
            if case .region(let count) = damage.loss { count > 0 && damage.reason.contains("no commit slot") } else { false }
        }
        let recovered = try Keychain.open(at: file.path, credential: TestKeychain.password, options: .init(recover: true))
        #expect(recovered.recovery?.damage.contains(where: unread) == true, "\(recovered.recovery?.damage ?? [])")
        let report = try Keychain.salvage(from: file.path, credential: TestKeychain.password, to: directory.file("salvaged.kcf"))
        #expect(report.damages.contains(where: unread), "\(report.damages)")
        let damaged = try fileBytes(file.path)
        let repair = try Keychain.repair(at: file.path, credential: TestKeychain.password, keepingCopyAt: directory.file("backup.kcf"))
        #expect(repair.damages.contains(where: unread), "\(repair.damages)")
        #expect(try fileBytes(directory.file("backup.kcf")) == damaged, "what repair drops is kept in the copy")
    }
}
