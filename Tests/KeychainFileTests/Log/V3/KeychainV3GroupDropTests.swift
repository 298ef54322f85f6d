import Foundation
import Testing
@testable import KeychainFile
@_spi(KeychainFileInternals) import KeychainCrypto

/// Dropping a whole group (Docs/FormatVersion3.md §2.5, SPEC.md §40): a holder of group A's credential holds
/// the log key, so it can write commits and whole files; what it cannot make is another group's head — a page tag, or
/// for a group without a page the start value, both under that group's key. Every commit's heads name every group,
/// and every file holds at least one commit, so a file from which A dropped all of B — pages and head — is refused by
/// B's holders and full holders, and by any scoped holder that saw B named before.
@Suite("Format version 3: a group dropped whole is caught")
struct KeychainV3GroupDropTests {
    static let groupA = KeychainV3GroupTests.groupA
    static let groupB = KeychainV3GroupTests.groupB
    static let groupC = "com.example.c"
    static let scopedC = Credential.password("scoped to group c")

    /// Whether opening `path` with `credential` refuses the file: `corrupted`, or its newest commit set aside as
    /// possibly acknowledged (which no write goes over). Another error is not a refusal.
    static func refuses(_ path: String, _ credential: Credential = TestKeychain.password) -> Bool {
        do {
            return try V3Keychain.open(path, credential: credential).tornTail?.mayHoldAcknowledgedData == true
        } catch let error as KeychainError {
            if case .corrupted = error { return true }
            return false
        } catch {
            return false
        }
    }

    /// The start value of key id `keyID`'s chain begun in `epoch`, computed here from the group's start key:
    /// HMAC-SHA256(start key, u64 epoch big-endian)[0 ..< 16] (§35.4).
    static func startValue(_ keys: GroupKeysV3, epoch: UInt64) -> [UInt8] {
        let message = (0..<8).map { UInt8(truncatingIfNeeded: epoch >> (56 - 8 * UInt64($0))) }
        return Array(HMAC<SHA256>.authenticationCode(for: message, using: keys.startKey).prefix(16))
    }

    @Test("A new file holds one commit, whose heads name the default group at group sequence 0 with its start value; the first add chains from it")
    func newFileHoldsOneCommit() throws {
        let directory = TemporaryDirectory()
        let keychain = try V3Keychain.create(in: directory)
        let log = try V3Keychain.log(keychain)
        #expect(keychain.head.sequence == 1)
        #expect(log.state.header.rewriteHeadSequence == 1 && log.state.header.rewriteEnd > 0)
        let keys = try #require(log.state.groups.byKeyID[RecordLogV3.defaultKeyID])
        let head = try #require(log.state.replayed.heads?[RecordLogV3.defaultKeyID])
        #expect(head.groupSequence == 0 && head.startEpoch == 1)
        #expect(head.lastTag == Self.startValue(keys, epoch: 1))
        let reopened = try V3Keychain.open(directory.file("v3.kcf"))
        #expect(reopened.count == 0 && reopened.head == keychain.head)
        try reopened.add(GenericPassword(service: "svc", account: "first", password: "one"))
        let after = try #require(try V3Keychain.log(V3Keychain.open(directory.file("v3.kcf"))).state.replayed.heads?[RecordLogV3.defaultKeyID])
        #expect(after.groupSequence == 1 && after.startEpoch == 1)
    }

    @Test("A header naming no commit (rewrite end and head sequence 0), which a holder of the log key can write, is refused: every file's creation or rewrite wrote one")
    func headerWithoutACommit() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        try keychain.add(GenericPassword(service: "svc", account: "one", password: "1"))
        let log = try V3Keychain.log(keychain)
        let header = log.state.header
        let forged = FileHeaderV3(
            fileID: header.fileID, epoch: header.epoch, epochSalt: header.epochSalt, rewriteEnd: 0, rewriteHeadSequence: 0,
            rewriteHeadChain: header.initialChainValue(headerKey: log.state.logKeys.header), tombstoneHorizonDays: header.tombstoneHorizonDays,
            sealedKeyTable: header.sealedKeyTable, slots: header.slots, chainStarts: header.chainStarts)
        let run = HeaderRunV3.encode(try forged.encode(headerKey: log.state.logKeys.header))
        var bytes = try fileBytes(path)
        for offset in [0, HeaderRunV3.runBOffset(pageCount: log.state.pageCount)] {
            bytes.replaceSubrange(offset..<(offset + run.count), with: run)
        }
        try writeFileBytes(bytes, to: path)
        #expect(throws: KeychainError.corrupted(offset: 80, reason: "")) { try V3Keychain.open(path) }
        do {
            _ = try V3Keychain.open(path)
        } catch {
            #expect("\(error)".contains("rewrite head sequence is 0"), "\(error)")
        }
    }

    @Test("A's holder rewrites the file without any of B's pages or its head: the full holder and B's holder refuse it; before, both opened it with B empty")
    func scopedRewriteDroppingB() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try KeychainV3ScopedWriteTests.keychain(in: directory)
        let keyB = try #require(try V3Keychain.log(full).state.groups.keyID(named: Self.groupB))
        let viewA = try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedA)
        let log = try V3Keychain.log(viewA)
        // What A's holder can write with the log key and A's key: its scoped rewrite, less B's segments and chain start.
        let copied = try log.opaqueSegmentsToCopy().filter { $0.keyID != keyB }
        #expect(try log.opaqueSegmentsToCopy().contains { $0.keyID == keyB }, "B has pages to drop")
        var starts: [ChainStartV3] = []
        for keyID in Set(copied.map(\.keyID)).sorted() {
            starts.append(ChainStartV3(keyID: keyID, startEpoch: try #require(log.state.replayed.heads?[keyID]).startEpoch))
        }
        let index = viewA.withLock { viewA.index }
        let order = index.positionsInAddedOrder()
        let keys = RecordLogV3.FileKeys(
            fileID: log.fileID, logKey: log.state.logKey, root: nil, groups: log.state.groups, sealedKeyTable: log.state.header.sealedKeyTable,
            slots: log.state.header.slots, tombstoneHorizonDays: log.state.header.tombstoneHorizonDays)
        var generator = SystemRandomNumberGenerator()
        _ = try RecordLogV3.writeFile(
            at: path, replacing: true, keys: keys, epoch: log.epoch + 1, itemCount: order.count, item: { index.item(atPosition: Int(order[$0])) },
            decryptSecret: { (item) throws(KeychainError) in try log.decryptSecret(of: item) }, tombstones: [:], tombstoneGroups: [:],
            copied: copied, chainStarts: starts, fileSystem: log.fileSystem, using: &generator)
        #expect(Self.refuses(path), "the full holder took B as empty")
        #expect(Self.refuses(path, KeychainV3ScopedWriteTests.scopedB), "B's holder took B as empty")
        // A's own view of the file it wrote is whole: it holds nothing of B to miss.
        #expect(try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedA).count == 4)
    }

    /// The scoped-write keychain with group C (2 items, a credential scoped to C) and every item of B deleted, then
    /// compacted 100 days later, past the tombstones' 90-day horizon: B is left with no page, and a head of group
    /// sequence 0. Returns that full keychain (its clock 100 days ahead), its path and B's key id.
    static func keychainWithEmptyB(in directory: TemporaryDirectory) throws -> (full: Keychain, path: String, keyB: UInt8) {
        let (now, path) = try KeychainV3ScopedWriteTests.keychain(in: directory)
        try KeychainV3GroupTests.add(now, group: Self.groupC, count: 2)
        try now.addCredential(Self.scopedC, scope: .groups([Self.groupC]), keyDerivation: KeychainV3CredentialTests.cheap)
        try now.delete(Query(.genericPassword, attributes: [.accessGroup: .string(Self.groupB)], limit: .all))
        let full = try Keychain.open(
            at: path, credential: TestKeychain.password, options: Keychain.OpenOptions(), random: RandomSource(SystemRandomNumberGenerator()),
            clock: { Date().addingTimeInterval(100 * 86_400) }, fileSystem: PosixFileSystem())
        try full.compact()
        let log = try V3Keychain.log(full)
        let keyB = try #require(log.state.groups.keyID(named: Self.groupB))
        let head = try #require(log.state.replayed.heads?[keyB], "B keeps a head with no page")
        #expect(head.groupSequence == 0 && head.startEpoch == log.epoch)
        #expect(head.lastTag == Self.startValue(try #require(log.state.groups.byKeyID[keyB]), epoch: log.epoch))
        return (full, path, keyB)
    }

    @Test("B emptied and compacted keeps a head of group sequence 0; B's holder opens it empty and adds, and everyone sees the add")
    func emptyGroupKeepsItsHead() throws {
        let directory = TemporaryDirectory()
        let (full, path, _) = try Self.keychainWithEmptyB(in: directory)
        let viewB = try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedB)
        #expect(viewB.count == 0 && viewB.tornTail == nil)
        try viewB.add(GenericPassword(service: "svc", account: "b again", password: "b", accessGroup: Self.groupB))
        try full.refresh()
        #expect(try full.find(GenericPassword.self, matching: .genericPassword(service: "svc", account: "b again")).first?.value == Array("b".utf8))
        #expect(try V3Keychain.open(path, credential: Self.scopedC).count == 2)
    }

    @Test("B without a page: A's commit that leaves out B's head is refused by the full holder, B's holder, and C's holder, which saw B named before")
    func appendLeavingOutAnEmptyGroup() throws {
        let directory = TemporaryDirectory()
        let (_, path, keyB) = try Self.keychainWithEmptyB(in: directory)
        let viewA = try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedA)
        let log = try V3Keychain.log(viewA)
        let keyA = try #require(log.state.groups.keyID(named: Self.groupA))
        let heads = try log.headsToCarry
        #expect(heads[keyB]?.groupSequence == 0)
        try KeychainV3ScopedWriteTests.appendForgedCommit(viewA, keyID: keyA, heads: heads.removing(keyB))
        #expect(Self.refuses(path), "the full holder took the commit without B's head")
        #expect(Self.refuses(path, KeychainV3ScopedWriteTests.scopedB), "B's holder took the commit without its head")
        #expect(Self.refuses(path, Self.scopedC), "C's holder took the commit that no longer names B")
    }

    @Test("A's scoped compaction carries B's head of group sequence 0 and the epoch B's chain began in; B's holder and the full holder open the result and B's holder writes on")
    func scopedCompactionCarriesAnEmptyGroup() throws {
        let directory = TemporaryDirectory()
        let (full, path, keyB) = try Self.keychainWithEmptyB(in: directory)
        let before = try #require(try V3Keychain.log(full).state.replayed.heads?[keyB])
        let viewA = try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedA)
        try viewA.compact()
        let log = try V3Keychain.log(viewA)
        #expect(log.state.replayed.heads?[keyB] == before, "B's head carried as it was")
        #expect(log.state.header.chainStarts.contains(ChainStartV3(keyID: keyB, startEpoch: before.startEpoch)))
        let viewB = try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedB)
        #expect(viewB.count == 0 && viewB.tornTail == nil)
        try viewB.add(GenericPassword(service: "svc", account: "b after", password: "b", accessGroup: Self.groupB))
        let fullAgain = try V3Keychain.open(path)
        #expect(fullAgain.tornTail == nil)
        #expect(try fullAgain.find(GenericPassword.self, matching: .genericPassword(service: "svc", account: "b after")).first?.value == Array("b".utf8))
        #expect(try V3Keychain.open(path, credential: Self.scopedC).count == 2)
    }

    @Test("A's scoped compaction copying more than one record's worth (B's first segment after 4 MiB of the default group's) writes the copies as one transaction; the full holder and B's holder open the result")
    func scopedCompactionOfManyRecords() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let full = try V3Keychain.create(in: directory)
        let large = [UInt8](repeating: 0x33, count: 1 << 20)
        try full.batch { (batch) throws(KeychainError) in
            for number in 0..<5 { try batch.add(GenericPassword(service: "svc", account: "default \(number)", accessGroup: "", value: large)) }
        }
        try KeychainV3GroupTests.add(full, group: Self.groupA, count: 2)
        try KeychainV3GroupTests.add(full, group: Self.groupB, count: 2)
        try full.addCredential(KeychainV3ScopedWriteTests.scopedA, scope: .groups([Self.groupA]), keyDerivation: KeychainV3CredentialTests.cheap)
        try full.addCredential(KeychainV3ScopedWriteTests.scopedB, scope: .groups([Self.groupB]), keyDerivation: KeychainV3CredentialTests.cheap)
        let viewA = try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedA)
        try viewA.compact()
        // The copies take two records or more: all but the last are parts, so the first commit names every copied group.
        let log = try V3Keychain.log(viewA)
        // The log's bytes as the healing log reads them (the file interleaves each chunk's parity).
        let bytes = try log.state.log.read(at: 0, count: log.state.log.writtenEnd)
        var offset = 0
        var chain = log.state.header.initialChainValue(headerKey: log.state.logKeys.header)
        var kinds: [RecordV2.Kind] = []
        while offset < bytes.count, kinds.last != .commit {
            let record = try RecordV3Decoder.decode(bytes, at: offset, previousChain: chain, keys: log.state.keys)
            kinds.append(record.kind)
            chain = record.chainTag
            offset = record.end
        }
        #expect(kinds.count >= 2 && kinds.dropLast().allSatisfy { $0 == .part }, "\(kinds)")
        let fullAgain = try V3Keychain.open(path)
        #expect(fullAgain.tornTail == nil && fullAgain.count == 9)
        let viewB = try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedB)
        #expect(viewB.tornTail == nil && viewB.count == 2)
    }

    /// The heads of group sequence 0, by commit, that name a group the file holds pages of: each would publish that
    /// group's start value for its start epoch, with which a holder of the log key could write the group as empty.
    static func startValuesPublished(_ path: String) throws -> [(commit: UInt64, keyID: UInt8)] {
        let log = try V3Keychain.log(V3Keychain.open(path))
        let bytes = try log.state.log.read(at: 0, count: log.state.log.writtenEnd)
        var offset = 0
        var chain = log.state.header.initialChainValue(headerKey: log.state.logKeys.header)
        var commits: [(UInt64, HeadsV3)] = []
        while offset < bytes.count {
            let record = try RecordV3Decoder.decode(bytes, at: offset, previousChain: chain, keys: log.state.keys)
            if let heads = record.heads { commits.append((record.sequence, heads)) }
            chain = record.chainTag
            offset = record.end
        }
        let withPages = Set(commits.last?.1.groups.filter { $0.groupSequence > 0 }.map(\.keyID) ?? [])
        return commits.flatMap { (sequence, heads) in
            heads.groups.filter { $0.groupSequence == 0 && withPages.contains($0.keyID) }.map { (sequence, $0.keyID) }
        }
    }

    @Test("No commit of a rewritten file names a group that has pages at group sequence 0: after a scoped compaction, and a full one whose first record holds none of a group's entries")
    func rewritesPublishNoStartValue() throws {
        let directory = TemporaryDirectory()
        let (full, path) = try KeychainV3ScopedWriteTests.keychain(in: directory)
        // A's compaction: the copies of the default group and B come first, A's own items after them.
        try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedA).compact()
        let afterScoped = try Self.startValuesPublished(path)
        #expect(afterScoped.isEmpty, "\(afterScoped)")
        #expect(try V3Keychain.open(path).count == 12)
        // A full compaction whose first 4,096 entries are the default group's: B's first item comes in a later record.
        try full.refresh()
        try full.batch { (batch) throws(KeychainError) in
            for number in 0..<4_100 { try batch.add(GenericPassword(service: "bulk", account: "\(number)", password: "x")) }
        }
        try full.delete(Query(.genericPassword, attributes: [.accessGroup: .string(Self.groupB)], limit: .all))
        try KeychainV3GroupTests.add(full, group: Self.groupB, count: 1, from: 20)
        try full.compact()
        let afterFull = try Self.startValuesPublished(path)
        #expect(afterFull.isEmpty, "\(afterFull)")
        #expect(try V3Keychain.open(path, credential: KeychainV3ScopedWriteTests.scopedB).count == 1)
        #expect(try V3Keychain.open(path).count == 4_108)
    }
}
