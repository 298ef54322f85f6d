import Foundation
import Testing
@testable import KeychainFile
@_spi(KeychainFileInternals) import KeychainCrypto

/// Items in their access groups' pages, under their groups' keys (Docs/FormatVersion3.md §2.11): the engine's step 3
/// of issue 31, for full credentials.
@Suite("Format version 3: items in their access groups")
struct KeychainV3GroupTests {
    static let groupA = "com.example.a"
    static let groupB = "com.example.b"

    /// Adds `count` generic passwords to `group`, accounts "`group`-n", one batch; returns account → secret.
    @discardableResult
    static func add(_ keychain: Keychain, group: String, count: Int, from first: Int = 0) throws -> [String: [UInt8]] {
        var added: [String: [UInt8]] = [:]
        try keychain.batch { (batch) throws(KeychainError) in
            for number in first..<(first + count) {
                let account = "\(group.isEmpty ? "default" : group)-\(number)"
                let secret = Array("secret of \(account), long enough to look for".utf8)
                try batch.add(GenericPassword(service: "svc", account: account, accessGroup: group, value: secret))
                added[account] = secret
            }
        }
        return added
    }

    /// Every record of the file at `path` decoded with the keys of the groups in `following` alone (key id → chain
    /// at the file's epoch): the puts, deletions and tombstones of the pages it opened, by key id, and the key ids of
    /// the segments it could not open.
    static func decodeFollowing(
        _ following: [UInt8], path: String, log: RecordLogV3
    ) throws -> (entries: [UInt8: [DecodedEntryV2]], opaque: Set<UInt8>) {
        let bytes = try fileBytes(path)
        var groups: [UInt8: GroupChainV3] = [:]
        for keyID in following {
            groups[keyID] = GroupChainV3(keys: try #require(log.state.groups.byKeyID[keyID]), startEpoch: log.epoch)
        }
        var offset = HeaderRunV3.logStart(pageCount: log.state.pageCount)
        var chain = log.state.header.initialChainValue(headerKey: log.state.logKeys.header)
        var entries: [UInt8: [DecodedEntryV2]] = [:]
        var opaque: Set<UInt8> = []
        while offset < bytes.count, offset < HeaderRunV3.logStart(pageCount: log.state.pageCount) + log.end {
            let record = try RecordV3Decoder.decode(bytes, at: offset, previousChain: chain, keys: log.state.keys, groups: &groups)
            for segment in record.segments {
                switch segment {
                case .page(let page): entries[page.keyID, default: []] += page.entries
                case .opaque(let other): opaque.insert(other.keyID)
                }
            }
            chain = record.chainTag
            offset = record.end
        }
        return (entries, opaque)
    }

    static func putIDs(_ entries: [DecodedEntryV2]?) -> Set<ItemID> {
        Set((entries ?? []).compactMap { if case .put(let id, _, _) = $0 { return id } else { return nil } })
    }

    @Test("Each item is in its group's pages: a holder of one group's keys opens that group's items and nothing of the others'")
    func itemsInTheirGroups() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        var expected = try Self.add(keychain, group: "", count: 3)
        expected.merge(try Self.add(keychain, group: Self.groupA, count: 4)) { $1 }
        expected.merge(try Self.add(keychain, group: Self.groupB, count: 5)) { $1 }
        #expect(try liveSecrets(keychain) == expected)
        let log = try V3Keychain.log(keychain)
        #expect(log.state.groups.table?.groups.map(\.name) == ["", Self.groupA, Self.groupB])
        #expect(log.state.groups.table?.groups.map(\.keyID) == [1, 2, 3])
        let reopened = try V3Keychain.open(path)
        #expect(try liveSecrets(reopened) == expected)
        #expect(try genericPasswordSnapshot(reopened) == genericPasswordSnapshot(keychain))
        // The records, read with group A's keys alone: its pages hold A's four items, and every other segment stays shut.
        let reopenedLog = try V3Keychain.log(reopened)
        let onlyA = try Self.decodeFollowing([2], path: path, log: reopenedLog)
        let itemsOfA = try Set(reopened.search(Query(.genericPassword, limit: .all), returning: [.attributes, .persistentReference]).filter {
            $0.attributes?.string(.accessGroup) == Self.groupA
        }.map { try #require($0.persistentReference?.itemID) })
        #expect(itemsOfA.count == 4)
        #expect(Self.putIDs(onlyA.entries[2]) == itemsOfA)
        #expect(onlyA.entries.keys.sorted() == [2])
        #expect(onlyA.opaque == [1, 3])
        // And every put A's pages hold names group A.
        for case .put(_, let attributes, _) in onlyA.entries[2] ?? [] {
            #expect(attributes.string(.accessGroup) == Self.groupA)
        }
        // Read with every group's keys, the three groups' items are the whole keychain.
        let all = try Self.decodeFollowing([1, 2, 3], path: path, log: reopenedLog)
        #expect(all.opaque.isEmpty)
        #expect(Self.putIDs(all.entries[1]).count == 3 && Self.putIDs(all.entries[3]).count == 5)
    }

    @Test("Adding a group renews the root key and keeps the log key and every group key; every credential still opens the file")
    func addingAGroupRenewsTheRoot() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        let rawKey = SymmetricKey(data: [UInt8](repeating: 0x5A, count: 32))
        try keychain.addCredential(.key(rawKey), keyDerivation: KeychainV3CredentialTests.cheap)
        var expected = try Self.add(keychain, group: "", count: 2)
        let other = try V3Keychain.open(path, credential: .key(rawKey))
        let log = try V3Keychain.log(keychain)
        let before = (epoch: log.epoch, logKey: log.state.logKey, root: try #require(log.state.root), table: log.state.header.sealedKeyTable,
                      defaultKey: try #require(log.state.groups.table?.groups.first?.key))
        expected.merge(try Self.add(keychain, group: Self.groupA, count: 2)) { $1 }
        #expect(log.epoch == before.epoch + 1)
        #expect(log.state.logKey == before.logKey)
        #expect(try #require(log.state.root) != before.root)
        #expect(log.state.groups.table?.groups.first?.key == before.defaultKey)
        #expect(log.state.groups.table?.lastKeyID == 2)
        // The table is sealed under the new root: the old root no longer opens it.
        #expect(throws: SlotProblemV3.self) { _ = try KeyTableV3.open(log.state.header.sealedKeyTable, root: before.root, fileID: log.fileID) }
        #expect(throws: SlotProblemV3.self) { _ = try KeyTableV3.open(before.table, root: try #require(log.state.root), fileID: log.fileID) }
        // The other credential's slot was granted the new root: it opens the file, and a keychain object holding it follows.
        #expect(try liveSecrets(V3Keychain.open(path, credential: .key(rawKey))) == expected)
        try other.refresh()
        #expect(try liveSecrets(other) == expected)
        #expect(try liveSecrets(V3Keychain.open(path)) == expected)
        // A second item of the same group adds no group, so no rewrite.
        try Self.add(keychain, group: Self.groupA, count: 1, from: 10)
        #expect(log.epoch == before.epoch + 1)
    }

    @Test("A group added elsewhere: a reader opens the new key table through its grant, with one key derivation")
    func readerFollowsAGroupAddedElsewhere() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let writer = try V3Keychain.create(in: directory)
        var expected = try Self.add(writer, group: "", count: 2)
        let reader = try V3Keychain.open(path)
        expected.merge(try Self.add(writer, group: Self.groupA, count: 2)) { $1 }
        let derivations = try V3CatchUpDerivesCredentialAgainTests.derivations { try reader.refresh() }
        #expect(derivations == 1)
        #expect(try liveSecrets(reader) == expected)
        // Then a compaction: the reader follows it with the keys it holds.
        try writer.compact()
        #expect(try V3CatchUpDerivesCredentialAgainTests.derivations { try reader.refresh() } == 0)
        #expect(try liveSecrets(reader) == expected)
    }

    @Test("Moving an item to another group keeps its persistent reference; the old group's pages delete it, the new group's put it")
    func movingAnItem() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        try Self.add(keychain, group: Self.groupA, count: 2)
        try Self.add(keychain, group: Self.groupB, count: 1)
        let query = Query.genericPassword(service: "svc", account: "\(Self.groupA)-1")
        let reference = try #require(keychain.search(query, returning: .persistentReference).first?.persistentReference)
        try keychain.update(query, setting: [.accessGroup: .string(Self.groupB)])
        let moved = try #require(keychain.search(query, returning: [.attributes, .persistentReference]).first)
        #expect(moved.persistentReference == reference)
        #expect(moved.attributes?.string(.accessGroup) == Self.groupB)
        let reopened = try V3Keychain.open(path)
        #expect(try genericPasswordSnapshot(reopened) == genericPasswordSnapshot(keychain))
        let log = try V3Keychain.log(reopened)
        let keyA = try #require(log.state.groups.keyID(named: Self.groupA))
        let keyB = try #require(log.state.groups.keyID(named: Self.groupB))
        // The last record: a deletion of the item in A's page, then its put in B's.
        let onlyA = try Self.decodeFollowing([keyA], path: path, log: log)
        let onlyB = try Self.decodeFollowing([keyB], path: path, log: log)
        #expect(onlyA.entries[keyA]?.last.map { if case .delete(let id, _) = $0 { id == reference.itemID } else { false } } == true)
        #expect(onlyB.entries[keyB]?.last.map { if case .put(let id, _, _) = $0 { id == reference.itemID } else { false } } == true)
        // The move's deletion is a tombstone of group A, dropped by a compaction since the item is live.
        try keychain.compact()
        #expect(try genericPasswordSnapshot(V3Keychain.open(path)) == genericPasswordSnapshot(keychain))
        let compacted = try V3Keychain.log(keychain)
        #expect(compacted.state.replayed.tombstones[reference.itemID] == nil)
        #expect(try keychain.find(GenericPassword.self, matching: query).first?.accessGroup == Self.groupB)
    }

    /// A flipped bit where a compacted file holds several groups' segments in one record, their heads, and their
    /// tombstones: the group code's reading of damage, as a failing disk would make it.
    @Test("One flipped bit anywhere in a compacted file of three groups is repaired: every item in its group, nothing lost")
    func flippedBitsInAFileOfThreeGroups() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        try Self.add(keychain, group: "", count: 6)
        try Self.add(keychain, group: Self.groupA, count: 6)
        try Self.add(keychain, group: Self.groupB, count: 6)
        try keychain.delete(.genericPassword(service: "svc", account: "\(Self.groupA)-3"))
        try keychain.update(.genericPassword(service: "svc", account: "\(Self.groupB)-2"), setting: [.accessGroup: .string(Self.groupA)])
        try keychain.compact()
        let expected = try genericPasswordSnapshot(keychain).sorted()
        #expect(try genericPasswordSnapshot(V3Keychain.open(path)).sorted() == expected)
        let pristine = try fileBytes(path)
        var refused: [Int] = []
        for offset in stride(from: 0, to: pristine.count, by: 13) {
            var damaged = pristine
            damaged[offset] ^= 0x04
            try writeFileBytes(damaged, to: path)
            do {
                let opened = try V3Keychain.open(path)
                #expect(try genericPasswordSnapshot(opened).sorted() == expected, "a flipped bit at byte \(offset) opened other items or groups")
                try opened.add(GenericPassword(service: "other", account: "x", password: "y", accessGroup: Self.groupB))
                let again = try V3Keychain.open(path)
                try again.delete(.genericPassword(service: "other", account: "x"))
                #expect(try genericPasswordSnapshot(again).sorted() == expected, "a write after a flipped bit at byte \(offset) lost or moved items")
            } catch {
                refused.append(offset)
            }
        }
        #expect(refused.isEmpty, "refused after a flipped bit at bytes \(refused)")
    }

    @Test("A deleted item's tombstone stays in its group's pages across a compaction")
    func tombstonesStayInTheirGroup() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        try Self.add(keychain, group: "", count: 2)
        try Self.add(keychain, group: Self.groupA, count: 2)
        let query = Query.genericPassword(service: "svc", account: "\(Self.groupA)-0")
        let id = try #require(keychain.search(query, returning: .persistentReference).first?.persistentReference?.itemID)
        try keychain.delete(query)
        try keychain.compact()
        let reopened = try V3Keychain.open(path)
        let log = try V3Keychain.log(reopened)
        let keyA = try #require(log.state.groups.keyID(named: Self.groupA))
        #expect(log.state.replayed.tombstoneGroups[id] == keyA)
        let onlyA = try Self.decodeFollowing([keyA], path: path, log: log)
        let tombstones = (onlyA.entries[keyA] ?? []).compactMap { if case .tombstone(let id, _) = $0 { return id } else { return nil } }
        #expect(tombstones == [id])
        let onlyDefault = try Self.decodeFollowing([1], path: path, log: log)
        #expect(!(onlyDefault.entries[1] ?? []).contains { if case .tombstone = $0 { true } else { false } })
    }

    /// Appends `records` forged commits, each of `entries(number)` sealed in the page of key id `keyID`, as a
    /// writer holding every key would: authentic records.
    static func forge(_ keychain: Keychain, records: Int, keyID: UInt8, entries: (Int) -> [EntryV2]) throws {
        let log = try V3Keychain.log(keychain)
        var generator = SystemRandomNumberGenerator()
        var head = keychain.head
        var heads = try log.currentHeads
        for number in 0..<records {
            let record = try RecordV3Encoder.encode(
                kind: .commit, sequence: head.sequence + 1, part: 0, previousChain: head.chainValue,
                segments: RecordV3Encoder.pages(entries(number), keys: try #require(log.state.groups.byKeyID[keyID])), heads: heads,
                keys: log.state.keys, using: &generator)
            try log.state.log.append(
                record.bytes, committedEnd: log.state.log.writtenEnd + record.bytes.count, headSequence: head.sequence + 1, headChain: record.chainTag)
            head = Head(epoch: head.epoch, sequence: head.sequence + 1, chainValue: record.chainTag)
            heads = record.heads
        }
    }

    /// An item's attributes as a keychain stores them: with its creation and modification dates.
    static func stored(_ item: GenericPassword) throws -> ItemAttributes {
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        return try item.attributes.setting(.creationDate, to: .date(date)).setting(.modificationDate, to: .date(date))
    }

    /// A keychain with one item in group A (account "`groupA`-0") and one in group B, and its path.
    static func twoGroups(in directory: TemporaryDirectory) throws -> (Keychain, String) {
        let keychain = try V3Keychain.create(in: directory)
        try add(keychain, group: groupA, count: 1)
        try add(keychain, group: groupB, count: 1)
        return (keychain, directory.file("v3.kcf"))
    }

    /// The reason of the `corrupted` error opening `path` throws, or a recorded issue.
    static func corruptionReason(opening path: String) -> String? {
        let error = #expect(throws: KeychainError.self) { _ = try V3Keychain.open(path) }
        guard case .corrupted(_, let reason)? = error else {
            Issue.record("expected corrupted, got \(String(describing: error))")
            return nil
        }
        return reason
    }

    @Test("A deletion, a tombstone or a put of an item in another group's page than the one it is live in is refused", arguments: [0, 1, 2])
    func entryOfAnItemLiveInAnotherGroup(kind: Int) throws {
        let directory = TemporaryDirectory()
        let (keychain, path) = try Self.twoGroups(in: directory)
        let keyB = try #require(V3Keychain.log(keychain).state.groups.keyID(named: Self.groupB))
        let query = Query.genericPassword(service: "svc", account: "\(Self.groupA)-0")
        let id = try #require(keychain.search(query, returning: .persistentReference).first?.persistentReference?.itemID)
        // Group A's item, named in B's page: deleted, tombstoned, or put (with B as its group) without a deletion in A.
        let put = try Self.stored(GenericPassword(service: "svc", account: "moved badly", password: "x", accessGroup: Self.groupB))
        let entry: EntryV2 = [.delete(id: id, time: 1), .tombstone(id: id, time: 1), .put(id: id, attributes: put, secret: [1])][kind]
        let unrelated = try ItemID(bytes: [UInt8](repeating: 9, count: 16))
        try Self.forge(keychain, records: 2, keyID: keyB) { number in number == 0 ? [entry] : [.tombstone(id: unrelated, time: 2)] }
        let reason = try #require(Self.corruptionReason(opening: path))
        #expect(reason.contains("key id \(keyB)") && reason.contains(HexText.lowercase(id.bytes)) && reason.contains("live in key id"), "\(reason)")
    }

    /// One commit (the newest, only possibly acknowledged) or two: authentic, so refused wherever it lies — never set
    /// aside as a torn commit.
    @Test("A put in a group's page that names another access group is refused, naming the key id and the item", arguments: [1, 2])
    func putInAnotherGroupsPage(commits: Int) throws {
        let directory = TemporaryDirectory()
        let (keychain, path) = try Self.twoGroups(in: directory)
        let keyA = try #require(V3Keychain.log(keychain).state.groups.keyID(named: Self.groupA))
        // A writer holding both groups' keys seals an item of group B in A's page: authentic, and misplaced.
        let id = try ItemID(bytes: [UInt8](repeating: 0x42, count: 16))
        let attributes = try Self.stored(GenericPassword(service: "svc", account: "misplaced", password: "x", accessGroup: Self.groupB))
        try Self.forge(keychain, records: commits, keyID: keyA) { number in
            number == 0 ? [.put(id: id, attributes: attributes, secret: Array("x".utf8))] : [.delete(id: id, time: 1)]
        }
        let reason = try #require(Self.corruptionReason(opening: path))
        #expect(reason.contains("key id \(keyA)") && reason.contains(HexText.lowercase(id.bytes)), "\(reason)")
    }
}
