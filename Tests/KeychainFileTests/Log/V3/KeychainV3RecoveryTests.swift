import Foundation
import Testing
@testable import KeychainFile

/// Where a version 3 file's records and pages lie, read from its bytes with the keys of a full holder's open log:
/// what the damage tests destroy, and what they expect each destruction to cost.
struct V3LogMap {
    struct Page {
        let record: Int
        let keyID: UInt8
        /// The page's place in its group's chain.
        let groupSequence: UInt64
        /// The whole segment, header included, in the log's logical bytes.
        let segment: Range<Int>
        /// The page box, in the log's logical bytes.
        let pageBox: Range<Int>
        /// Each put's item id and secret box, in the log's logical bytes.
        let puts: [(id: ItemID, box: Range<Int>)]
    }

    let pageCount: Int
    /// Each record's range in the log's logical bytes.
    let records: [Range<Int>]
    /// Each record's heads box (a commit's), in the log's logical bytes.
    let headsBoxes: [Range<Int>?]
    let pages: [Page]
    /// Each group's key id by name.
    let keyIDs: [String: UInt8]

    init(_ keychain: Keychain) throws {
        let log = try V3Keychain.log(keychain)
        let state = log.state
        let pageCount = state.pageCount
        self.pageCount = pageCount
        let file = try fileBytes(log.path)
        let end = state.replayed.end
        let bytes = (0..<end).map { file[HeaderRunShiftedFileHandle.physical(HealingLayout.physical($0), pageCount: pageCount)] }
        var chains = RecordLogV3.initialChains(of: state.groups, keys: state.keys)
        var previous = state.header.initialChainValue(headerKey: state.logKeys.header)
        var records: [Range<Int>] = []
        var headsBoxes: [Range<Int>?] = []
        var pages: [Page] = []
        var position = 0
        while position < end {
            let decoded = try RecordV3Decoder.decode(bytes, at: position, previousChain: previous, keys: state.keys, groups: &chains)
            for case .page(let page) in decoded.segments {
                let segment = try SegmentV3.read(bytes, at: page.segment.lowerBound, limit: page.segment.upperBound, base: 0, index: 0)
                let puts = page.entries.compactMap { (entry) -> (id: ItemID, box: Range<Int>)? in
                    if case .put(let id, _, let box) = entry { return (id, box) } else { return nil }
                }
                pages.append(Page(
                    record: records.count, keyID: page.keyID, groupSequence: page.groupSequence, segment: segment.range,
                    pageBox: segment.pageBox, puts: puts))
            }
            records.append(position..<decoded.end)
            headsBoxes.append(try RecordV3Decoder.scan(bytes, at: position).heads?.pageBox)
            previous = decoded.chainTag
            position = decoded.end
        }
        self.records = records
        self.headsBoxes = headsBoxes
        self.pages = pages
        keyIDs = Dictionary(state.groups.names.map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The file offset of a logical log byte.
    func physical(_ logical: Int) -> Int {
        HeaderRunShiftedFileHandle.physical(HealingLayout.physical(logical), pageCount: pageCount)
    }

    /// Overwrites (XOR 0xA5) the logical log bytes `range` of the file at `path`.
    func destroy(_ range: Range<Int>, at path: String) throws {
        var bytes = try fileBytes(path)
        for logical in range { bytes[physical(logical)] ^= 0xA5 }
        try writeFileBytes(bytes, to: path)
    }

    /// The log's logical bytes `range` of the file at `path`.
    func bytes(_ range: Range<Int>, at path: String) throws -> [UInt8] {
        let bytes = try fileBytes(path)
        return range.map { bytes[physical($0)] }
    }

    /// Writes `replacement` over the log's logical bytes from `start` of the file at `path`.
    func write(_ replacement: [UInt8], at start: Int, to path: String) throws {
        var bytes = try fileBytes(path)
        for (index, byte) in replacement.enumerated() { bytes[physical(start + index)] = byte }
        try writeFileBytes(bytes, to: path)
    }

    /// The pages of group `name`, in log order.
    func pages(of name: String) -> [Page] { pages.filter { $0.keyID == keyIDs[name] } }
}

/// Recovering reads, salvage and repair of version 3 files (SPEC.md §37.6): damage beyond what parity repairs costs
/// what it hits — a page's entries, one item when only its secret box is hit, or the records whose frames cannot be
/// read — every loss is listed, and every other item of every group is served and can be written to a new file that
/// the same credentials, scoped ones included, open.
@Suite("Format version 3: recovering open, salvage and repair")
struct KeychainV3RecoveryTests {
    static let groupA = KeychainV3GroupTests.groupA
    static let groupB = KeychainV3GroupTests.groupB
    static let scopedB = KeychainV3ScopedWriteTests.scopedB

    /// Adds `numbers` items to `group` in one transaction, each with an account long enough that a page holds about
    /// sixty of them; a secret of `secretSize` bytes for the numbers in `large`.
    @discardableResult
    static func add(
        _ keychain: Keychain, group: String, _ numbers: Range<Int>, large: Set<Int> = [], secretSize: Int = 6_000
    ) throws -> [String: [UInt8]] {
        var added: [String: [UInt8]] = [:]
        try keychain.batch { (batch) throws(KeychainError) in
            for number in numbers {
                let account = "\(group.isEmpty ? "default" : group)-\(number)-" + String(repeating: "x", count: 60)
                var secret = Array("secret of \(account)".utf8)
                if large.contains(number) { secret += [UInt8](repeating: UInt8(number & 0xFF), count: secretSize) }
                try batch.add(GenericPassword(service: "svc", account: account, accessGroup: group, value: secret))
                added[account] = secret
            }
        }
        return added
    }

    /// A compacted file of 200 items in group A and 200 in group B (several pages each, in one transaction), with
    /// `scopedB` reaching group B, then one more commit in group B; its path and items.
    static func compactedTwoGroups(_ directory: TemporaryDirectory) throws -> (keychain: Keychain, path: String, expected: [String: [UInt8]]) {
        let keychain = try V3Keychain.create(in: directory)
        var expected = try add(keychain, group: groupA, 0..<200)
        expected.merge(try add(keychain, group: groupB, 0..<200)) { $1 }
        try keychain.addCredential(scopedB, scope: .groups([groupB]), keyDerivation: KeychainV3CredentialTests.cheap)
        try keychain.compact()
        expected.merge(try add(keychain, group: groupB, 1_000..<1_001)) { $1 }
        return (keychain, directory.file("v3.kcf"), expected)
    }

    static func openRecovering(_ path: String, credential: Credential = TestKeychain.password) throws -> Keychain {
        try Keychain.open(at: path, credential: credential, options: .init(recover: true))
    }

    /// Every generic password of service "svc" the keychain serves, over every group it reaches.
    static func served(_ keychain: Keychain) throws -> [String: [UInt8]] {
        try liveSecrets(keychain)
    }

    /// The file of ``compactedTwoGroups(_:)`` with group B's second page destroyed beyond what parity repairs, its tag
    /// kept; the map of the undamaged file and that page.
    static func secondPageOfBDestroyed(_ directory: TemporaryDirectory) throws -> (path: String, expected: [String: [UInt8]], map: V3LogMap, page: V3LogMap.Page) {
        let (keychain, path, expected) = try compactedTwoGroups(directory)
        let map = try V3LogMap(keychain)
        let pagesOfB = map.pages(of: groupB)
        try #require(pagesOfB.count >= 3, "group B has \(pagesOfB.count) pages")
        let page = pagesOfB[1]
        try #require(page.pageBox.count > 4_400, "a page of \(page.pageBox.count) bytes: parity would repair its destruction")
        // The nonce and ciphertext, not the tag: the group's next page still names that tag.
        try map.destroy((page.pageBox.lowerBound)..<(page.pageBox.upperBound - 16), at: path)
        return (path, expected, map, page)
    }

    @Test("A page destroyed beyond parity costs its entries alone: the group's later pages, its later commits and the other group are served, and the loss is listed")
    func pageLost() throws {
        let directory = TemporaryDirectory()
        let (path, expected, map, page) = try Self.secondPageOfBDestroyed(directory)
        let damaged = try fileBytes(path)
        #expect(throws: KeychainError.self, "an acknowledged record that does not verify fails a plain open") { _ = try V3Keychain.open(path) }
        let keychain = try Self.openRecovering(path)
        let damage = try #require(keychain.recovery?.damage)
        #expect(damage.count == 1, "\(damage)")
        let first = try #require(damage.first)
        #expect(first.loss == .region(byteCount: page.pageBox.count + RecordV3.segmentHeaderSize + page.puts.reduce(0) { $0 + $1.box.count }))
        #expect(first.offset == map.physical(page.pageBox.lowerBound - RecordV3.segmentHeaderSize), "\(first)")
        let served = try Self.served(keychain)
        #expect(served.allSatisfy { expected[$0.key] == $0.value }, "every item served is as written")
        let missing = Set(expected.keys).subtracting(served.keys)
        #expect(missing.count == page.puts.count && !missing.isEmpty, "\(missing.count) missing, the page held \(page.puts.count)")
        #expect(missing.allSatisfy { $0.hasPrefix(Self.groupB) })
        // Group B's pages after the lost one, and its later commit, opened in the chain.
        let lastOfB = try #require(map.pages(of: Self.groupB).last)
        #expect(lastOfB.record > page.record)
        #expect(served.keys.contains { $0.hasPrefix("\(Self.groupB)-1000-") })
        // Read-only: nothing is written to a file opened with recovery.
        #expect(throws: KeychainError.self) { try keychain.add(GenericPassword(service: "svc", account: "new", password: "x")) }
        #expect(try fileBytes(path) == damaged)
    }

    @Test("A secret box destroyed beyond parity costs its item alone, named by id; its page's other items are served")
    func secretLost() throws {
        let directory = TemporaryDirectory()
        let keychain = try V3Keychain.create(in: directory)
        var expected = try Self.add(keychain, group: Self.groupA, 0..<20)
        expected.merge(try Self.add(keychain, group: Self.groupB, 0..<6, large: [3])) { $1 }
        expected.merge(try Self.add(keychain, group: Self.groupA, 20..<25)) { $1 }
        let map = try V3LogMap(keychain)
        let path = directory.file("v3.kcf")
        let page = try #require(map.pages(of: Self.groupB).first)
        let large = try #require(page.puts.first { $0.box.count > 6_000 })
        try map.destroy((large.box.lowerBound + 12)..<(large.box.upperBound - 16), at: path)
        #expect(throws: KeychainError.self) { _ = try V3Keychain.open(path) }
        let recovered = try Self.openRecovering(path)
        let damage = try #require(recovered.recovery?.damage)
        #expect(damage.count == 1, "\(damage)")
        #expect(damage.first?.loss == .item)
        #expect(damage.first?.itemID == large.id)
        #expect(damage.first?.offset == map.physical(large.box.lowerBound))
        let served = try Self.served(recovered)
        #expect(served.allSatisfy { expected[$0.key] == $0.value })
        #expect(Set(expected.keys).subtracting(served.keys) == [ "\(Self.groupB)-3-" + String(repeating: "x", count: 60)])
    }

    /// Commits of groups A and B, in the order `order` names them: "A" 10 items, "B-lost" 4 of B with one large secret
    /// (the record destroyed whole, its frame with it), "B-big" 150 of B (three pages or more in one record),
    /// "B-late" 1 of B; then 1 of the default group. Returns the file, the items, what each commit added, the lost
    /// record and the big commit's pages of B. Each of `scoped` is added after the first commit, reaching its groups.
    static func destroyedRecord(
        _ directory: TemporaryDirectory, order: [String], scoped: [(credential: Credential, groups: [String])] = []
    ) throws -> (path: String, expected: [String: [UInt8]], added: [String: [String: [UInt8]]], lost: Range<Int>, big: [V3LogMap.Page], map: V3LogMap) {
        let keychain = try V3Keychain.create(in: directory)
        var expected: [String: [UInt8]] = [:]
        var added: [String: [String: [UInt8]]] = [:]
        var nextA = 0
        for commit in order {
            let items: [String: [UInt8]]
            switch commit {
            case "A":
                items = try add(keychain, group: groupA, nextA..<(nextA + 10))
                nextA += 10
            case "B-lost": items = try add(keychain, group: groupB, 0..<4, large: [2])
            case "B-big": items = try add(keychain, group: groupB, 100..<250)
            default: items = try add(keychain, group: groupB, 1_000..<1_001)
            }
            added[commit, default: [:]].merge(items) { $1 }
            expected.merge(items) { $1 }
            if expected.count == items.count {
                for (credential, groups) in scoped {
                    try keychain.addCredential(credential, scope: .groups(groups), keyDerivation: KeychainV3CredentialTests.cheap)
                }
            }
        }
        expected.merge(try add(keychain, group: "", 0..<1)) { $1 }
        let map = try V3LogMap(keychain)
        let pagesOfB = map.pages(of: groupB)
        let lostPage = try #require(pagesOfB.first { $0.puts.contains { $0.box.count > 6_000 } })
        let lost = map.records[lostPage.record]
        try #require(lost.count > 4_400)
        let big = Dictionary(grouping: pagesOfB, by: \.record).values.first { $0.count >= 3 } ?? []
        try #require(big.count >= 3, "the 150 items took \(big.count) pages")
        try map.destroy(lost, at: directory.file("v3.kcf"))
        return (directory.file("v3.kcf"), expected, added, lost, big, map)
    }

    @Test("A record whose frame cannot be read costs the bytes up to the next record whose frame reads; the next commit's heads put each group's chain back, so a group's later pages all open")
    func regionLostThenHeads() throws {
        let directory = TemporaryDirectory()
        let (path, expected, added, lost, _, map) = try Self.destroyedRecord(directory, order: ["A", "B-lost", "A", "B-big", "B-late"])
        #expect(throws: KeychainError.self) { _ = try V3Keychain.open(path) }
        let recovered = try Self.openRecovering(path)
        let damage = costs(try #require(recovered.recovery?.damage))
        #expect(damage.count == 1, "\(damage)")
        // A's second commit, read past the lost bytes, chains to a tag they held: no head confirms it (SPEC.md §25.3).
        let secondA = Set((10..<20).map { "\(Self.groupA)-\($0)-" + String(repeating: "x", count: 60) })
        #expect(try unconfirmedAccounts(recovered) == secondA)
        #expect(damage.first?.loss == .region(byteCount: lost.count))
        #expect(damage.first?.offset == map.physical(lost.lowerBound))
        let served = try Self.served(recovered)
        #expect(served.allSatisfy { expected[$0.key] == $0.value })
        // Group A's commit after the lost record names group B's head in its heads: B's next page opens in its chain.
        #expect(Set(expected.keys).subtracting(served.keys) == Set(added["B-lost", default: [:]].keys))
    }

    @Test("The byte before the next record, when with that record's length it reads as a frame header of gigabytes whose length check passes (1 time in 256), does not end the search: only the lost record's bytes are lost")
    func shiftedFrameHeaderBeforeTheNextRecord() throws {
        let directory = TemporaryDirectory()
        let (path, _, _, lost, _, map) = try Self.destroyedRecord(directory, order: ["A", "B-lost", "A", "B-big", "B-late"])
        // The last destroyed byte set to the complement of the next record's length's low byte: the 8 bytes from it are
        // a length of (that byte << 24 | length >> 8) and its check. A search that counted that length against its
        // budget gave up, and lost every record after the damage (seen in about 1 run in 80 with random bytes there).
        let next = try map.bytes(lost.upperBound..<(lost.upperBound + 4), at: path)
        try map.write([~next[3]], at: lost.upperBound - 1, to: path)
        let recovered = try Self.openRecovering(path)
        let damage = costs(try #require(recovered.recovery?.damage))
        #expect(damage.count == 1, "\(damage)")
        #expect(damage.first?.loss == .region(byteCount: lost.count))
    }

    @Test("A record whose frame cannot be read, followed at once by a record of several pages of the group: its first page is lost (it names a tag the lost bytes held), the others are found at their group sequences")
    func regionLostThenPages() throws {
        let directory = TemporaryDirectory()
        let (path, expected, added, lost, big, map) = try Self.destroyedRecord(directory, order: ["A", "B-lost", "B-big", "A", "B-late"])
        #expect(throws: KeychainError.self) { _ = try V3Keychain.open(path) }
        let recovered = try Self.openRecovering(path)
        let damage = costs(try #require(recovered.recovery?.damage))
        #expect(damage.count == 2, "\(damage)")
        #expect(damage.first?.loss == .region(byteCount: lost.count))
        #expect(damage.first?.offset == map.physical(lost.lowerBound))
        let firstAfter = big[0]
        #expect(damage.last?.offset == map.physical(firstAfter.pageBox.lowerBound - RecordV3.segmentHeaderSize), "\(damage)")
        let served = try Self.served(recovered)
        #expect(served.allSatisfy { expected[$0.key] == $0.value })
        let inLostRecord = Set(added["B-lost", default: [:]].keys)
        let missing = Set(expected.keys).subtracting(served.keys)
        #expect(inLostRecord.isSubset(of: missing))
        #expect(missing.subtracting(inLostRecord).count == firstAfter.puts.count, "\(missing.count) missing")
        #expect(missing.subtracting(inLostRecord).isSubset(of: Set(added["B-big", default: [:]].keys)))
        #expect(served.keys.filter { $0.hasPrefix(Self.groupA) }.count == 20)
        // B's big commit, read past the lost bytes, chains to a tag they held: its items served are named.
        #expect(try unconfirmedAccounts(recovered) == Set(added["B-big", default: [:]].keys).intersection(served.keys))
        #expect(served.keys.contains { $0.hasPrefix("\(Self.groupB)-1000-") })
        #expect(served.keys.contains { $0.hasPrefix("default-0-") })
    }

    @Test("Salvage writes every item that authenticates to a new version 3 file in the next epoch, which the same credentials open — the scoped one too — and takes writes")
    func salvage() throws {
        let directory = TemporaryDirectory()
        let (path, expected, _, page) = try Self.secondPageOfBDestroyed(directory)
        let damaged = try fileBytes(path)
        let recoveredItems = try Self.served(Self.openRecovering(path))
        let destination = directory.file("salvaged.kcf")
        let report = try Keychain.salvage(from: path, credential: TestKeychain.password, to: destination)
        #expect(report.damages.count == 1)
        #expect(report.itemCount == expected.count - page.puts.count)
        #expect(try fileBytes(path) == damaged, "the damaged file is not changed")
        let salvaged = try Keychain.open(at: destination, credential: TestKeychain.password)
        #expect(salvaged.fileFormatVersion == 3)
        #expect(salvaged.recovery == nil && salvaged.tornTail == nil && salvaged.repairs.isEmpty)
        #expect(try Self.served(salvaged) == recoveredItems)
        #expect(try salvaged.statistics().epoch == report.keptHead.epoch + 1)
        // The scoped credential opens the new file and reaches group B alone.
        let scoped = try Keychain.open(at: destination, credential: Self.scopedB)
        let servedB = try Self.served(scoped)
        #expect(servedB == recoveredItems.filter { $0.key.hasPrefix(Self.groupB) })
        #expect(!servedB.isEmpty)
        try salvaged.add(GenericPassword(service: "svc", account: "after salvage", password: "x"))
        #expect(try Self.served(Keychain.open(at: destination, credential: TestKeychain.password))["after salvage"] == Array("x".utf8))
    }

    @Test("Salvage of a damaged file keeps each deletion's tombstone, with its time, in its group: the item stays deleted in the new file")
    func salvageKeepsTombstones() throws {
        let directory = TemporaryDirectory()
        let (keychain, path, _) = try Self.compactedTwoGroups(directory)
        var deleted: [ItemID] = []
        for number in [3, 150] {
            let query = Query.genericPassword(service: "svc", account: "\(Self.groupB)-\(number)-" + String(repeating: "x", count: 60))
            deleted.append(try #require(keychain.search(query, returning: .persistentReference).first?.persistentReference?.itemID))
            _ = try keychain.delete(query)
        }
        let before = try V3Keychain.log(keychain).state
        let keyB = try #require(before.groups.keyID(named: Self.groupB))
        try #require(deleted.allSatisfy { before.replayed.tombstones[$0] != nil && before.replayed.tombstoneGroups[$0] == keyB })
        // Damage elsewhere: group A's second page.
        let map = try V3LogMap(keychain)
        let page = map.pages(of: Self.groupA)[1]
        try #require(page.pageBox.count > 4_400, "a page of \(page.pageBox.count) bytes: parity would repair its destruction")
        try map.destroy(page.pageBox.lowerBound..<(page.pageBox.upperBound - 16), at: path)
        let report = try Keychain.salvage(from: path, credential: TestKeychain.password, to: directory.file("salvaged.kcf"))
        #expect(!report.damages.isEmpty)
        let salvaged = try V3Keychain.open(directory.file("salvaged.kcf"))
        let after = try V3Keychain.log(salvaged).state
        for id in deleted {
            #expect(after.replayed.tombstones[id] == before.replayed.tombstones[id], "item \(id): its deletion time")
            #expect(after.replayed.tombstoneGroups[id] == after.groups.keyID(named: Self.groupB), "item \(id): its group")
        }
        #expect(try Self.served(salvaged).keys.allSatisfy { !$0.hasPrefix("\(Self.groupB)-3-") && !$0.hasPrefix("\(Self.groupB)-150-") })
    }

    @Test("Repair keeps a byte-for-byte copy, rewrites the file with every item that authenticates, and the keychain takes writes again")
    func repair() throws {
        let directory = TemporaryDirectory()
        let (path, _, _, _) = try Self.secondPageOfBDestroyed(directory)
        let damaged = try fileBytes(path)
        let recoveredItems = try Self.served(Self.openRecovering(path))
        let backup = directory.file("v3.kcf.damaged")
        let report = try Keychain.repair(at: path, credential: TestKeychain.password, keepingCopyAt: backup)
        #expect(report.damages.count == 1)
        #expect(try fileBytes(backup) == damaged)
        let repaired = try V3Keychain.open(path)
        #expect(try Self.served(repaired) == recoveredItems)
        try repaired.add(GenericPassword(service: "svc", account: "after repair", password: "x"))
        #expect(try Self.served(V3Keychain.open(path))["after repair"] == Array("x".utf8))
        #expect(try Self.served(Keychain.open(at: path, credential: Self.scopedB)).count == recoveredItems.filter { $0.key.hasPrefix(Self.groupB) }.count)
    }

    @Test("A credential scoped to some groups reads its own groups past damage, but salvage and repair refuse it before anything is copied")
    func scopedCredential() throws {
        let directory = TemporaryDirectory()
        let (path, expected, _, page) = try Self.secondPageOfBDestroyed(directory)
        let damaged = try fileBytes(path)
        let scoped = try Self.openRecovering(path, credential: Self.scopedB)
        #expect(scoped.recovery?.damage.count == 1)
        let served = try Self.served(scoped)
        #expect(served.allSatisfy { expected[$0.key] == $0.value && $0.key.hasPrefix(Self.groupB) })
        #expect(served.count == expected.keys.filter { $0.hasPrefix(Self.groupB) }.count - page.puts.count)
        let destination = directory.file("salvaged.kcf"), backup = directory.file("backup.kcf")
        #expect(throws: KeychainError.invalidParameter("")) {
            _ = try Keychain.salvage(from: path, credential: Self.scopedB, to: destination)
        }
        #expect(throws: KeychainError.invalidParameter("")) {
            _ = try Keychain.repair(at: path, credential: Self.scopedB, keepingCopyAt: backup)
        }
        #expect(!FileManager.default.fileExists(atPath: destination))
        #expect(!FileManager.default.fileExists(atPath: backup))
        #expect(try fileBytes(path) == damaged)
    }

    /// One commit of ten items of A and one of B with a 12,000-byte secret, after one item of each group and before
    /// ten more of A; with a credential scoped to A. Returns the file, the items, the map, the commit and the large put.
    static func sharedCommit(_ directory: TemporaryDirectory) throws -> (path: String, expected: [String: [UInt8]], map: V3LogMap, record: Int, large: (id: ItemID, box: Range<Int>)) {
        let keychain = try V3Keychain.create(in: directory)
        var expected = try add(keychain, group: groupA, 100..<101)
        expected.merge(try add(keychain, group: groupB, 0..<1)) { $1 }
        try keychain.addCredential(KeychainV3ScopedWriteTests.scopedA, scope: .groups([groupA]), keyDerivation: KeychainV3CredentialTests.cheap)
        try keychain.batch { (batch) throws(KeychainError) in
            for number in 0..<10 {
                let account = "\(groupA)-\(number)"
                try batch.add(GenericPassword(service: "svc", account: account, accessGroup: groupA, value: Array(account.utf8)))
                expected[account] = Array(account.utf8)
            }
            try batch.add(GenericPassword(service: "svc", account: "large", accessGroup: groupB, value: [UInt8](repeating: 7, count: 12_000)))
        }
        expected["large"] = [UInt8](repeating: 7, count: 12_000)
        expected.merge(try add(keychain, group: groupA, 10..<20)) { $1 }
        let map = try V3LogMap(keychain)
        let pageOfB = try #require(map.pages(of: groupB).last)
        let large = try #require(pageOfB.puts.first { $0.box.count > 12_000 })
        let pageOfA = try #require(map.pages(of: groupA).first { $0.record == pageOfB.record })
        try #require(pageOfA.pageBox.upperBound < large.box.lowerBound, "A's page comes before B's in the record")
        return (directory.file("v3.kcf"), expected, map, pageOfB.record, large)
    }

    @Test("A record's heads and chain tag destroyed with another group's secret: the scoped holder, whose pages all open, is told the record does not verify; the full holder loses the one item")
    func scopedHolderToldOfOthersDamage() throws {
        let directory = TemporaryDirectory()
        let (path, expected, map, number, large) = try Self.sharedCommit(directory)
        let record = map.records[number]
        let heads = try #require(map.headsBoxes[number])
        // The secret box (beyond what the chunk's parity rebuilds, which it then cannot do for any byte of the chunk),
        // and the heads box and chain tag; the segment headers are kept.
        try map.destroy((large.box.lowerBound + 12)..<(large.box.upperBound - 16), at: path)
        try map.destroy(heads.lowerBound..<record.upperBound, at: path)
        #expect(throws: KeychainError.self) { _ = try Keychain.open(at: path, credential: KeychainV3ScopedWriteTests.scopedA) }

        let scoped = try Self.openRecovering(path, credential: KeychainV3ScopedWriteTests.scopedA)
        #expect(try Self.served(scoped) == expected.filter { $0.key.hasPrefix(Self.groupA) }, "every item of A")
        let damage = costs(try #require(scoped.recovery?.damage))
        // The destroyed chain tag breaks the record chain: A's items, changed before it or after it, are named.
        // A's item 100 comes before the rewrite that adding group B and the scoped credential made: no other copy's
        // records can stand there.
        let itemsOfA = Set(expected.keys.filter { $0.hasPrefix(Self.groupA) && !$0.hasPrefix("\(Self.groupA)-100-") })
        let wrongScoped = try unconfirmedAccounts(scoped).symmetricDifference(itemsOfA)
        #expect(wrongScoped.isEmpty, "named, or not, wrongly: \(wrongScoped.sorted())")
        #expect(damage.count == 1 && damage.first?.offset == map.physical(record.lowerBound), "\(damage)")
        #expect(damage.first?.reason.contains("does not verify") == true)

        let full = try Self.openRecovering(path)
        #expect(costs(full.recovery?.damage ?? []).map(\.loss) == [.item], "\(full.recovery?.damage ?? [])")
        let wrongFull = try unconfirmedAccounts(full).symmetricDifference(itemsOfA)
        #expect(wrongFull.isEmpty, "named, or not, wrongly: \(wrongFull.sorted())")
        #expect(full.recovery?.damage.first?.itemID == large.id)
        #expect(try Self.served(full) == expected.filter { $0.key != "large" })
    }

    @Test("A segment header destroyed costs the segments after it in its record, not the pages before it, which open in their chains")
    func segmentHeaderLost() throws {
        let directory = TemporaryDirectory()
        let (path, expected, map, number, large) = try Self.sharedCommit(directory)
        let record = map.records[number]
        let heads = try #require(map.headsBoxes[number])
        // From inside B's secret box to the record's end: the heads segment's header with it.
        try map.destroy((large.box.lowerBound + 12)..<record.upperBound, at: path)
        #expect(throws: KeychainError.self) { _ = try V3Keychain.open(path) }

        let full = try Self.openRecovering(path)
        let damage = costs(try #require(full.recovery?.damage))
        // A's item 100 comes before the rewrite that adding group B and the scoped credential made: no other copy's
        // records can stand there.
        let itemsOfA = Set(expected.keys.filter { $0.hasPrefix(Self.groupA) && !$0.hasPrefix("\(Self.groupA)-100-") })
        let wrongFull = try unconfirmedAccounts(full).symmetricDifference(itemsOfA)
        #expect(wrongFull.isEmpty, "named, or not, wrongly: \(wrongFull.sorted())")
        #expect(damage.map(\.loss) == [.item, .region(byteCount: heads.upperBound - (heads.lowerBound - RecordV3.segmentHeaderSize))], "\(damage)")
        #expect(damage.first?.itemID == large.id)
        #expect(damage.last?.offset == map.physical(heads.lowerBound - RecordV3.segmentHeaderSize))
        #expect(try Self.served(full) == expected.filter { $0.key != "large" }, "A's page in the damaged record opened")

        let scoped = try Self.openRecovering(path, credential: KeychainV3ScopedWriteTests.scopedA)
        #expect(try Self.served(scoped) == expected.filter { $0.key.hasPrefix(Self.groupA) })
        #expect(costs(scoped.recovery?.damage ?? []).count == 1)
        let wrongScoped = try unconfirmedAccounts(scoped).symmetricDifference(itemsOfA)
        #expect(wrongScoped.isEmpty, "named, or not, wrongly: \(wrongScoped.sorted())")
    }

    @Test("A frame forged with sequence 2^64 − 1 and its frame check made again (no key needed): the recovering open and salvage report it and serve the rest, never trapping")
    func forgedSequence() throws {
        let directory = TemporaryDirectory()
        let (path, expected, map, number, large) = try Self.sharedCommit(directory)
        let record = map.records[number]
        // The record's own bytes, its segment headers read before the edit.
        var bytes = try fileBytes(path)
        let log = (0..<record.upperBound).map { bytes[map.physical($0)] }
        let scanned = try RecordV3Decoder.scan(log, at: record.lowerBound)
        var frame = Array(log[record.lowerBound..<(record.lowerBound + RecordV3.frameCheckOffset)])
        frame.replaceSubrange(9..<17, with: [UInt8](repeating: 0xFF, count: 8))
        let headers = scanned.segments.flatMap { log[$0.range.lowerBound..<($0.range.lowerBound + RecordV3.segmentHeaderSize)] }
        let check = RecordV3.frameCheck(frame: frame, segmentHeaders: headers)
        for (index, byte) in (frame + check).enumerated() { bytes[map.physical(record.lowerBound + index)] = byte }
        try writeFileBytes(bytes, to: path)
        // The secret box destroyed too, beyond what the chunk's parity rebuilds: the forged frame then stands.
        try map.destroy((large.box.lowerBound + 12)..<(large.box.upperBound - 16), at: path)
        #expect(throws: KeychainError.self) { _ = try V3Keychain.open(path) }
        let recovered = try Self.openRecovering(path)
        let served = try Self.served(recovered)
        #expect(served.allSatisfy { expected[$0.key] == $0.value })
        #expect(Set(expected.keys).subtracting(served.keys) == ["large"])
        #expect(recovered.recovery?.damage.contains { $0.itemID == large.id } == true)
        let destination = directory.file("salvaged.kcf")
        _ = try Keychain.salvage(from: path, credential: TestKeychain.password, to: destination)
        #expect(try Self.served(Keychain.open(at: destination, credential: TestKeychain.password)) == served)
    }

    @Test("A recovering open given a pinned head checks the records read against it: the head before the damage passes, a later one is rolledBack")
    func pinnedHead() throws {
        let directory = TemporaryDirectory()
        let (keychain, path, _) = try Self.compactedTwoGroups(directory)
        let pin = keychain.head
        let map = try V3LogMap(keychain)
        let page = map.pages(of: Self.groupB)[1]
        try map.destroy(page.pageBox.lowerBound..<(page.pageBox.upperBound - 16), at: path)
        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(expectedHead: pin, recover: true))
        #expect(recovered.recovery?.damage.count == 1)
        let later = Head(epoch: pin.epoch, sequence: pin.sequence + 1, chainValue: pin.chainValue)
        #expect(throws: KeychainError.rolledBack(expected: later, found: pin)) {
            _ = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(expectedHead: later, recover: true))
        }
    }

    @Test("A recovering open of an undamaged version 3 file lists nothing, serves everything, and writes nothing")
    func undamaged() throws {
        let directory = TemporaryDirectory()
        let (_, path, expected) = try Self.compactedTwoGroups(directory)
        let bytes = try fileBytes(path)
        let keychain = try Self.openRecovering(path)
        #expect(keychain.recovery?.damage == [])
        #expect(try Self.served(keychain) == expected)
        #expect(throws: KeychainError.invalidParameter("")) {
            try keychain.add(GenericPassword(service: "svc", account: "new", password: "x"))
        }
        #expect(try fileBytes(path) == bytes)
    }

    @Test("A newest commit destroyed beyond parity: a plain open sets it aside read-only; repair keeps what of it still authenticates and writes again")
    func newestCommitSetAside() throws {
        let directory = TemporaryDirectory()
        let keychain = try V3Keychain.create(in: directory)
        var expected = try Self.add(keychain, group: Self.groupA, 0..<10)
        // The newest commit: two items of group B in one page, the first with a large secret.
        // 12,000 bytes: the last chunk's parity rebuilds a smaller box destroyed whole.
        let newest = try Self.add(keychain, group: Self.groupB, 0..<2, large: [0], secretSize: 12_000)
        expected.merge(newest) { $1 }
        let map = try V3LogMap(keychain)
        let path = directory.file("v3.kcf")
        let large = try #require(map.pages(of: Self.groupB).first?.puts.first { $0.box.count > 12_000 })
        try map.destroy((large.box.lowerBound + 12)..<(large.box.upperBound - 16), at: path)
        let plain = try V3Keychain.open(path)
        #expect(plain.tornTail?.mayHoldAcknowledgedData == true)
        #expect(try Self.served(plain).count == 10, "the older commits")
        #expect(throws: KeychainError.self) { try plain.add(GenericPassword(service: "svc", account: "new", password: "x")) }
        let report = try Keychain.repair(at: path, credential: TestKeychain.password, keepingCopyAt: directory.file("backup.kcf"))
        #expect(report.damages.map(\.loss) == [.item])
        let repaired = try V3Keychain.open(path)
        let served = try Self.served(repaired)
        #expect(served.count == 11 && served.allSatisfy { expected[$0.key] == $0.value }, "the newest commit's other item is kept")
        try repaired.add(GenericPassword(service: "svc", account: "new", password: "x"))
    }

    @Test("4,500 bytes destroyed anywhere after the header runs, in a file whose items were updated, deleted and moved between groups: the recovering open never fails, serves only values written, lists a loss whenever it serves an item not at its latest version (or deleted) or leaves one out, and salvage writes exactly what it served")
    func destroyedAnywhere() throws {
        let directory = TemporaryDirectory()
        let (keychain, path, expected) = try Self.compactedTwoGroups(directory)
        let more = try Self.add(keychain, group: "", 0..<40, large: [5, 30])
        var latest: [String: [UInt8]?] = expected.merging(more) { $1 }
        var written = latest.mapValues { [$0] }
        let account = { (group: String, number: Int) in "\(group)-\(number)-" + String(repeating: "x", count: 60) }
        // Updates in B, then deletions in A, then moves from B to A, a commit each.
        try keychain.batch { (batch) throws(KeychainError) in
            for number in 0..<20 {
                let secret = Array("updated \(number)".utf8)
                _ = try batch.update(.genericPassword(service: "svc", account: account(Self.groupB, number)), setting: [:], secret: secret)
                latest[account(Self.groupB, number)] = secret
                written[account(Self.groupB, number), default: []].append(secret)
            }
        }
        for number in 0..<10 {
            _ = try keychain.delete(.genericPassword(service: "svc", account: account(Self.groupA, number)))
            latest[account(Self.groupA, number)] = .some(nil)
        }
        for number in 50..<55 {
            _ = try keychain.update(.genericPassword(service: "svc", account: account(Self.groupB, number)), setting: [.accessGroup: .string(Self.groupA)])
        }
        let all = latest.compactMapValues { $0 }
        #expect(try Self.served(keychain) == all)
        let map = try V3LogMap(keychain)
        let pristine = try fileBytes(path)
        let start = map.physical(0)
        var trials = 0, lossy = 0
        for offset in stride(from: start, to: pristine.count, by: 2_311) {
            var damaged = pristine
            for place in offset..<min(pristine.count, offset + 4_500) { damaged[place] ^= 0x5A }
            try writeFileBytes(damaged, to: path)
            let recovered = try Self.openRecovering(path)
            let served = try Self.served(recovered)
            let damage = recovered.recovery?.damage ?? []
            #expect(served.allSatisfy { written[$0.key]?.contains($0.value) == true }, "bytes \(offset)…: a value served that was not written")
            let stale = served.filter { all[$0.key] != $0.value }
            #expect(stale.isEmpty || !damage.isEmpty, "bytes \(offset)…: \(stale.count) items served at an older version or though deleted, and no loss listed")
            if served.count < all.count || !stale.isEmpty {
                lossy += 1
                #expect(!damage.isEmpty, "bytes \(offset)…: \(all.count - served.count) items not served, and no loss listed")
            }
            let destination = directory.file("salvaged-\(offset).kcf")
            _ = try Keychain.salvage(from: path, credential: TestKeychain.password, to: destination)
            #expect(try Self.served(Keychain.open(at: destination, credential: TestKeychain.password)) == served, "bytes \(offset)…")
            trials += 1
        }
        #expect(trials > 20 && lossy > 0, "\(trials) trials, \(lossy) lost items")
        print("KeychainV3RecoveryTests.destroyedAnywhere: \(trials) trials, \(lossy) lost items beyond parity")
    }
}
