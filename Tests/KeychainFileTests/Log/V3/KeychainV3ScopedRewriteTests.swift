import Foundation
import Testing
@testable import KeychainFile
@_spi(KeychainFileInternals) import KeychainCrypto

/// Rewrites by a credential scoped to access groups (Docs/FormatVersion3.md §2.6, §2.7): a scoped compaction writes its
/// own groups anew and copies every other group's segments byte for byte, in log order, with the epoch each copied
/// chain began in named in the header; a scoped password change re-makes its own slot alone. Every other holder —
/// full, or scoped to another group — opens the result and finds its items as they were.
@Suite("Format version 3: rewrites by a credential scoped to access groups")
struct KeychainV3ScopedRewriteTests {
    typealias Scoped = KeychainV3ScopedWriteTests

    /// The segments a scoped holder of A copies (every group's but A's), in log order, as their bytes.
    static func copiedSegments(_ path: String) throws -> [[UInt8]] {
        let view = try V3Keychain.open(path, credential: Scoped.scopedA)
        return try V3Keychain.log(view).opaqueSegmentsToCopy().map(\.bytes)
    }

    static func header(_ path: String) throws -> FileHeaderV3 {
        let bytes = try fileBytes(path)
        let length = try #require(FileHeaderV3.declaredLength(Array(bytes[0..<16])))
        return try FileHeaderV3.parse(Array(bytes[0..<length]))
    }

    /// The keychain of ``KeychainV3ScopedWriteTests/keychain(in:)`` with dead bytes in every group: B's and the default
    /// group's items updated by the full holder, and twenty large items of A added and deleted by A's holder.
    static func churned(in directory: TemporaryDirectory) throws -> (full: Keychain, path: String) {
        let (full, path) = try Scoped.keychain(in: directory)
        try full.update(.genericPassword(service: "svc", account: "\(Scoped.groupB)-1"), setting: [:], secret: Array("B changed once".utf8))
        try full.update(.genericPassword(service: "svc", account: "\(Scoped.groupB)-1"), setting: [:], secret: Array("B changed twice".utf8))
        try full.delete(.genericPassword(service: "svc", account: "\(Scoped.groupB)-4"))
        try full.update(.genericPassword(service: "svc", account: "default-0"), setting: [:], secret: Array("default changed".utf8))
        let viewA = try V3Keychain.open(path, credential: Scoped.scopedA)
        try viewA.batch { (batch) throws(KeychainError) in
            for number in 0..<20 {
                try batch.add(GenericPassword(service: "big", account: "\(number)", accessGroup: Scoped.groupA, value: [UInt8](repeating: 0x41, count: 4_096)))
            }
        }
        try viewA.batch { (batch) throws(KeychainError) in
            for number in 0..<20 { try batch.delete(.genericPassword(service: "big", account: "\(number)")) }
        }
        try full.refresh()
        return (full, path)
    }

    @Test("A scoped compaction copies the other groups' segments byte for byte, in log order, names where their chains began, and shrinks A")
    func scopedCompactionKeepsOtherGroups() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Self.churned(in: directory)
        let everything = try Scoped.snapshot(full)
        let ofB = try Scoped.snapshot(V3Keychain.open(path, credential: Scoped.scopedB))
        #expect(ofB.count == 4)
        let copied = try Self.copiedSegments(path)
        let headerBefore = try Self.header(path)
        let headsBefore = try #require(try V3Keychain.log(full).state.replayed.heads)
        let keyA = try #require(try V3Keychain.log(full).state.groups.keyID(named: Scoped.groupA))
        let keyB = try #require(try V3Keychain.log(full).state.groups.keyID(named: Scoped.groupB))
        #expect(Set(copied.map { $0[0] }) == [1, keyB])

        let viewA = try V3Keychain.open(path, credential: Scoped.scopedA)
        let result = try viewA.compact()
        #expect(result.after.fileSize < result.before.fileSize - 20 * 4_096, "A's dead items were not dropped")
        // The header: the next epoch, the key table and slots as they were, and the start epoch of every copied chain.
        let header = try Self.header(path)
        #expect(header.epoch == headerBefore.epoch + 1)
        #expect(header.sealedKeyTable == headerBefore.sealedKeyTable)
        #expect(header.slots == headerBefore.slots)
        let startDefault = try #require(headsBefore[1]).startEpoch, startB = try #require(headsBefore[keyB]).startEpoch
        #expect(header.chainStarts == [ChainStartV3(keyID: 1, startEpoch: startDefault), ChainStartV3(keyID: keyB, startEpoch: startB)])
        #expect(header.chainStarts.allSatisfy { $0.startEpoch < header.epoch })
        // The other groups' segments, as the next scoped rewrite would copy them: the same bytes in the same order.
        let copiedAfter = try Self.copiedSegments(path)
        #expect(copiedAfter.count == copied.count)
        let same = copiedAfter == copied
        #expect(same, "the copied segments differ from those before the compaction")
        // Every holder opens it and finds what was there: the full one, B's, A's — newly and after catching up.
        #expect(try Scoped.snapshot(V3Keychain.open(path)) == everything)
        #expect(try Scoped.snapshot(V3Keychain.open(path, credential: Scoped.scopedB)) == ofB)
        #expect(try Scoped.snapshot(V3Keychain.open(path, credential: Scoped.scopedA)) == everything.filter { $0.hasPrefix("\(Scoped.groupA)|") })
        try full.refresh()
        #expect(try Scoped.snapshot(full) == everything)
        #expect(try Scoped.snapshot(viewA) == everything.filter { $0.hasPrefix("\(Scoped.groupA)|") })
        // A's chain begins anew in the new epoch; the copied groups' heads are where they were.
        let headsAfter = try #require(try V3Keychain.log(full).state.replayed.heads)
        #expect(headsAfter[keyA]?.startEpoch == header.epoch)
        #expect(headsAfter[keyB] == headsBefore[keyB] && headsAfter[1] == headsBefore[1])
    }

    @Test("After a scoped compaction every holder writes on: B's holder, A's, the full one; a second scoped compaction and a full one follow")
    func writesAfterScopedCompaction() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Self.churned(in: directory)
        let viewA = try V3Keychain.open(path, credential: Scoped.scopedA)
        let viewB = try V3Keychain.open(path, credential: Scoped.scopedB)
        try viewA.compact()
        try KeychainV3GroupTests.add(viewB, group: Scoped.groupB, count: 2, from: 50)
        try KeychainV3GroupTests.add(viewA, group: Scoped.groupA, count: 2, from: 50)
        try KeychainV3GroupTests.add(full, group: "", count: 1, from: 50)
        try viewB.update(.genericPassword(service: "svc", account: "\(Scoped.groupB)-0"), setting: [:], secret: Array("B after".utf8))
        let expected = try Scoped.snapshot(full)
        #expect(expected.count == 3 + 4 + 4 + 2 + 2 + 1)
        #expect(expected.contains("\(Scoped.groupB)|\(Scoped.groupB)-0|B after"))
        // A compacts again: the copied chains keep the epochs they began in, across both rewrites.
        let starts = try Self.header(path).chainStarts
        try viewA.refresh()
        try viewA.compact()
        let again = try Self.header(path)
        #expect(again.chainStarts == starts)
        #expect(try Scoped.snapshot(V3Keychain.open(path)) == expected)
        #expect(try Scoped.snapshot(V3Keychain.open(path, credential: Scoped.scopedB)) == expected.filter { $0.hasPrefix("\(Scoped.groupB)|") })
        // B's holder compacts in turn: A's chain, begun by A's rewrite, is now the copied one.
        try viewB.refresh()
        try viewB.compact()
        let keyA = try #require(try V3Keychain.log(full).state.groups.keyID(named: Scoped.groupA))
        let byB = try Self.header(path)
        #expect(byB.chainStarts.first { $0.keyID == keyA }?.startEpoch == again.epoch)
        #expect(try Scoped.snapshot(V3Keychain.open(path, credential: Scoped.scopedA)) == expected.filter { $0.hasPrefix("\(Scoped.groupA)|") })
        // A full compaction writes every group anew: no chain starts are left.
        try full.refresh()
        try full.compact()
        #expect(try Self.header(path).chainStarts.isEmpty)
        #expect(try Scoped.snapshot(V3Keychain.open(path)) == expected)
        #expect(try Scoped.snapshot(V3Keychain.open(path, credential: Scoped.scopedA)) == expected.filter { $0.hasPrefix("\(Scoped.groupA)|") })
    }

    @Test("A scoped holder counts the other groups' segments as live bytes: they are not dead to it, and its compaction cannot drop them")
    func statisticsCountOtherGroupsLive() throws {
        let directory = TemporaryDirectory()
        let (_, path) = try Self.churned(in: directory)
        let viewA = try V3Keychain.open(path, credential: Scoped.scopedA)
        try viewA.compact()
        let copiedBytes = try Self.copiedSegments(path).reduce(0) { $0 + $1.count }
        let statistics = try viewA.statistics()
        #expect(statistics.deadBytes < copiedBytes, "dead \(statistics.deadBytes) bytes, the other groups' segments \(copiedBytes)")
    }

    @Test("A scoped compaction refuses a file that needs a repair it cannot verify: nothing is written")
    func scopedCompactionRefusesUnverifiedRepair() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Scoped.keychain(in: directory)
        let bytes = try Scoped.damageBInTailChunk(full, at: path).bytes
        let viewA = try V3Keychain.open(path, credential: Scoped.scopedA)
        let error = #expect(throws: KeychainError.self) { _ = try viewA.compact() }
        guard case .io(_, let errno, _)? = error else {
            Issue.record("a scoped compaction over unverified bytes: \(String(describing: error))")
            return
        }
        #expect(errno == EIO)
        #expect(try fileBytes(path) == bytes)
    }

    @Test("A scoped password change re-makes its own slot: the old password stops opening it, the new one opens A alone, and a later full rotation still reaches it")
    func scopedPasswordChange() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Scoped.keychain(in: directory)
        let slotsBefore = try Self.header(path).slots
        let viewA = try V3Keychain.open(path, credential: Scoped.scopedA)
        try viewA.changePasswordKeepingKeys(from: "scoped to group a", to: "a's new password", keyDerivation: KeychainV3CredentialTests.cheap)
        let slotsAfter = try Self.header(path).slots
        #expect(slotsAfter.map(\.slotID) == slotsBefore.map(\.slotID))
        #expect(slotsAfter.map(\.attestation) == slotsBefore.map(\.attestation))
        #expect(zip(slotsAfter, slotsBefore).filter { $0 != $1 }.count == 1)
        #expect(throws: KeychainError.wrongCredentials) { _ = try V3Keychain.open(path, credential: Scoped.scopedA) }
        let renewed = try V3Keychain.open(path, credential: .password("a's new password"))
        #expect(renewed.scope == .groups([Scoped.groupA]))
        #expect(renewed.count == 4)
        #expect(viewA.count == 4)
        #expect(try V3Keychain.open(path, credential: Scoped.scopedB).count == 5)
        // The full holder renews every key: the changed slot, attested as before, is granted A's new key.
        try full.refresh()
        try full.changePassword(from: "correct horse battery staple", to: "full, renewed", keyDerivation: KeychainV3CredentialTests.cheap)
        #expect(try V3Keychain.open(path, credential: .password("a's new password")).count == 4)
        #expect(try V3Keychain.open(path, credential: Scoped.scopedB).count == 5)
    }

    @Test("A false chain start, written by a holder of the log key, makes the group's chain fail for every reader: corrupted, never an empty group")
    func forgedChainStart() throws {
        let directory = TemporaryDirectory()
        let (log, path) = try Self.compactedByA(in: directory)
        let keyB = try #require(log.state.groups.keyID(named: Scoped.groupB))
        let starts = log.state.header.chainStarts.map { $0.keyID == keyB ? ChainStartV3(keyID: keyB, startEpoch: 0) : $0 }
        #expect(starts != log.state.header.chainStarts)
        try Self.rewriteHeader(of: log, at: path, chainStarts: starts)
        for (name, credential) in [("full", TestKeychain.password), ("B's", Scoped.scopedB), ("A's", Scoped.scopedA)] {
            #expect(throws: KeychainError.corrupted(offset: 0, reason: ""), "\(name) holder") { _ = try V3Keychain.open(path, credential: credential) }
        }
    }

    @Test("A chain start of a key id the key table does not hold is corrupted for a full reader, which knows every group")
    func chainStartOfUnknownGroup() throws {
        let directory = TemporaryDirectory()
        let (log, path) = try Self.compactedByA(in: directory)
        #expect(log.state.groups.byKeyID[200] == nil)
        try Self.rewriteHeader(of: log, at: path, chainStarts: log.state.header.chainStarts + [ChainStartV3(keyID: 200, startEpoch: 1)])
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { _ = try V3Keychain.open(path) }
        // B's holder cannot tell a group it does not know from one that has no segment: it reads B as it was.
        #expect(try V3Keychain.open(path, credential: Scoped.scopedB).count == 4)
    }

    /// ``churned(in:)``'s keychain compacted by A's holder, and the log of a full holder that caught up with it.
    static func compactedByA(in directory: TemporaryDirectory) throws -> (log: RecordLogV3, path: String) {
        let (full, path) = try churned(in: directory)
        try V3Keychain.open(path, credential: Scoped.scopedA).compact()
        try full.refresh()
        return (try V3Keychain.log(full), path)
    }

    /// Writes `log`'s header again into both runs of the file at `path` with `chainStarts`, under its MAC: what any
    /// holder of the log key can do.
    static func rewriteHeader(of log: RecordLogV3, at path: String, chainStarts: [ChainStartV3]) throws {
        let header = log.state.header
        let forged = FileHeaderV3(
            fileID: header.fileID, epoch: header.epoch, epochSalt: header.epochSalt, rewriteEnd: header.rewriteEnd,
            rewriteHeadSequence: header.rewriteHeadSequence, rewriteHeadChain: header.rewriteHeadChain,
            tombstoneHorizonDays: header.tombstoneHorizonDays, sealedKeyTable: header.sealedKeyTable, slots: header.slots, chainStarts: chainStarts)
        let encoded = try forged.encode(headerKey: log.state.logKeys.header)
        #expect(HeaderRunV3.pageCount(forLength: encoded.count) == log.state.pageCount)
        let run = HeaderRunV3.encode(encoded)
        var bytes = try fileBytes(path)
        for offset in [0, HeaderRunV3.runBOffset(pageCount: log.state.pageCount)] {
            bytes.replaceSubrange(offset..<(offset + run.count), with: run)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test("Slots that hold 32 grants stop group additions, naming the way on; a scoped credential's keeping-keys change and a full password change empty them, and groups are added again")
    func grantsEmptiedByCredentialChanges() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let full = try V3Keychain.create(in: directory)
        try full.addCredential(Scoped.scopedA, scope: .groups([""]), keyDerivation: KeychainV3CredentialTests.cheap)
        func addGroup(_ number: Int) throws(KeychainError) {
            try full.add(GenericPassword(service: "svc", account: "g\(number)", password: "x", accessGroup: "com.example.g\(number)"))
        }
        // Each group added grants to the scoped slot; the adding holder's own is re-anchored on its new keys.
        for number in 0..<32 { try addGroup(number) }
        let refusal = #expect(throws: KeychainError.self) { try addGroup(32) }
        guard case .limitReached(let reason)? = refusal else {
            Issue.record("the 33rd group: \(String(describing: refusal))")
            return
        }
        #expect(reason.contains("32 grants") && reason.contains("--keep-keys"), "\(reason)")
        // A full password change rotates, and grants to the scoped slot: refused too while that slot holds 32.
        #expect(throws: KeychainError.limitReached("")) {
            try full.changePassword(from: "correct horse battery staple", to: "full, renewed", keyDerivation: KeychainV3CredentialTests.cheap)
        }
        // The scoped holder's keeping-keys change re-anchors its slot; then the full change re-anchors the full one.
        try V3Keychain.open(path, credential: Scoped.scopedA)
            .changePasswordKeepingKeys(from: "scoped to group a", to: "scoped, renewed", keyDerivation: KeychainV3CredentialTests.cheap)
        try full.refresh()
        try full.changePassword(from: "correct horse battery staple", to: "full, renewed", keyDerivation: KeychainV3CredentialTests.cheap)
        try addGroup(32)
        #expect(try V3Keychain.open(path, credential: .password("full, renewed")).count == 33)
        let scoped = try V3Keychain.open(path, credential: .password("scoped, renewed"))
        #expect(scoped.scope == .groups([""]) && scoped.count == 0)
        try scoped.add(GenericPassword(service: "svc", account: "scoped", password: "y"))
        #expect(try V3Keychain.open(path, credential: .password("full, renewed")).count == 34)
    }

    @Test("A scoped compaction refuses a file whose older, complete chunk does not match its parity (B's ciphertext damaged): nothing is written, and a full compaction repairs it")
    func scopedCompactionRefusesDamagedCompleteChunk() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try Self.churned(in: directory)
        let log = try V3Keychain.log(full)
        #expect(log.end > ChunkParity.dataLength, "the log should hold a complete chunk")
        // B's first segment stands in chunk 0, complete: flip a byte of its page ciphertext. A's holder cannot see it.
        let keyB = try #require(log.state.groups.keyID(named: Scoped.groupB))
        let segmentB = try #require(try Self.copiedSegments(path).first { $0[0] == keyB })
        var bytes = try fileBytes(path)
        let at = try #require(Self.offset(of: segmentB, in: bytes))
        #expect(at < HeaderRunShiftedFileHandle.physical(HealingLayout.physical(ChunkParity.dataLength), pageCount: log.state.pageCount))
        bytes[at + 9 + 12 + 5] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let viewA = try V3Keychain.open(path, credential: Scoped.scopedA)
        let error = #expect(throws: KeychainError.self) { _ = try viewA.compact() }
        guard case .io(let operation, let errno, _)? = error else {
            Issue.record("a scoped compaction over a damaged complete chunk: \(String(describing: error))")
            return
        }
        #expect(errno == EIO && operation.contains("chunk 0"), "\(operation)")
        #expect(try fileBytes(path) == bytes)
        // The full holder reads B's page repaired from the chunk's parity and rewrites the file; then A compacts.
        let repairing = try V3Keychain.open(path)
        let everything = try Scoped.snapshot(repairing)
        try repairing.compact()
        try viewA.refresh()
        try viewA.compact()
        #expect(try Scoped.snapshot(V3Keychain.open(path)) == everything)
    }

    /// Where `needle` first stands in `haystack`.
    static func offset(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        return (0...(haystack.count - needle.count)).first { start in
            haystack[start] == needle[0] && haystack[start..<(start + needle.count)].elementsEqual(needle)
        }
    }
}
