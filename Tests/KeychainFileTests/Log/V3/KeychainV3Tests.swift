import Foundation
import Testing
@testable import KeychainFile

/// Creating, opening and writing format version 3 files through `Keychain` (SPEC.md §30 – §38).
enum V3Keychain {
    static var options: Keychain.CreationOptions {
        var options = TestKeychain.fastOptions
        options.formatVersion = 3
        return options
    }

    static func create(in directory: TemporaryDirectory, name: String = "v3.kcf") throws -> Keychain {
        try Keychain.create(at: directory.file(name), credential: TestKeychain.password, options: options)
    }

    static func open(_ path: String, credential: Credential = TestKeychain.password) throws -> Keychain {
        try Keychain.open(at: path, credential: credential)
    }

    static func log(_ keychain: Keychain) throws -> RecordLogV3 {
        try #require(keychain.withLock { keychain.log as? RecordLogV3 })
    }
}

@Suite("Format version 3 through Keychain")
struct KeychainV3Tests {
    @Test("The public API creates version 3 when asked; versions 0 and 4 are refused before any file is made")
    func createdWhenAsked() throws {
        let directory = TemporaryDirectory()
        let keychain = try Keychain.create(at: directory.file("v3.kcf"), credential: TestKeychain.password, options: V3Keychain.options)
        #expect(keychain.fileFormatVersion == 3)
        #expect(try fileBytes(directory.file("v3.kcf"))[8..<10] == [0, 3])
        for version in [0, 4] {
            var options = V3Keychain.options
            options.formatVersion = version
            #expect(throws: KeychainError.invalidParameter("")) {
                _ = try Keychain.create(at: directory.file("v\(version).kcf"), credential: TestKeychain.password, options: options)
            }
            #expect(!FileManager.default.fileExists(atPath: directory.file("v\(version).kcf")))
        }
    }

    @Test("A new version 3 keychain keeps adds, updates and deletes across opens, in a file of version 3's layout")
    func roundTrip() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        var expected = try V2Keychain.fill(keychain, count: 60, perBatch: 7)
        try keychain.update(.genericPassword(service: "svc", account: "user3"), setting: [:], secret: Array("changed".utf8))
        expected["user3"] = Array("changed".utf8)
        try keychain.delete(.genericPassword(service: "svc", account: "user4"))
        expected["user4"] = nil
        #expect(try liveSecrets(keychain) == expected)
        #expect(keychain.fileFormatVersion == 3)
        let bytes = try fileBytes(path)
        #expect(Array(bytes[8..<10]) == [0, 3])
        // Run A and run B hold the same header, which parses as version 3's, 24 KiB apart as version 2's pages.
        let length = try #require(FileHeaderV3.declaredLength(Array(bytes[0..<16])))
        let header = try FileHeaderV3.parse(Array(bytes[0..<length]))
        #expect(Array(bytes[0..<4096]) == Array(bytes[28_672..<32_768]))
        #expect(header.slots.count == 1)
        // Every secret is sealed: none of their bytes stand in the file.
        for secret in expected.values where secret.count >= 8 {
            #expect(!contains(bytes, secret), "a secret stands in plaintext in the file")
        }
        let reopened = try V3Keychain.open(path)
        #expect(try liveSecrets(reopened) == expected)
        #expect(try genericPasswordSnapshot(reopened) == genericPasswordSnapshot(keychain))
        #expect(reopened.head == keychain.head)
        #expect(reopened.head.sequence == 12, "the creation commit, 9 batches, the update and the delete")
        #expect(try reopened.keySlots().map(\.kind) == [.password(iterations: 1_000)])
        #expect(throws: KeychainError.wrongCredentials) { try V3Keychain.open(path, credential: .password("wrong")) }
    }

    @Test("Every record of a version 3 file holds the default group's pages and the heads, and its chain verifies")
    func recordsAreVersion3() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        _ = try V2Keychain.fill(keychain, count: 5, perBatch: 2)
        let log = try V3Keychain.log(keychain)
        let bytes = try fileBytes(path)
        // The log's records, read with the codec alone: chained from C0, each a commit of key id 1's pages and the heads
        // — the first, the creation's, of the heads alone (§35.7).
        var offset = 32_768
        var chain = log.state.header.initialChainValue(headerKey: log.state.logKeys.header)
        var sequences: [UInt64] = []
        while offset < bytes.count {
            let record = try RecordV3Decoder.decode(bytes, at: offset, previousChain: chain, keys: log.state.keys)
            #expect(record.kind == .commit)
            #expect(record.segments.allSatisfy { $0.keyID == 1 })
            #expect(record.heads?.groups.map(\.keyID) == [1])
            sequences.append(record.sequence)
            chain = record.chainTag
            offset = record.end
        }
        #expect(sequences == [1, 2, 3, 4])
        #expect(chain == keychain.head.chainValue)
    }

    @Test("Two keychain objects on one version 3 file each see what the other commits, and a compaction")
    func twoWriters() throws {
        let directory = TemporaryDirectory()
        let first = try V3Keychain.create(in: directory)
        _ = try V2Keychain.fill(first, count: 5)
        let second = try V3Keychain.open(directory.file("v3.kcf"))
        try second.add(GenericPassword(service: "svc", account: "from second", password: "2"))
        try first.refresh()
        #expect(try first.find(GenericPassword.self, matching: .genericPassword(service: "svc", account: "from second")).count == 1)
        try first.delete(.genericPassword(service: "svc", account: "user0"))
        try second.refresh()
        #expect(try liveSecrets(second) == liveSecrets(first))
        #expect(second.head == first.head)
        try first.compact()
        try second.add(GenericPassword(service: "svc", account: "after compaction", password: "3"))
        try first.refresh()
        #expect(try liveSecrets(first) == liveSecrets(second))
        #expect(try liveSecrets(first).count == 6)
        #expect(first.head.epoch == 2)
    }

    @Test("Compaction moves a version 3 file to a new epoch with the same items and keys, keeps tombstones, and reopens")
    func compaction() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        var expected = try V2Keychain.fill(keychain, count: 40)
        let deleted = try #require(keychain.search(.genericPassword(service: "svc", account: "user7"), returning: .persistentReference)[0]
            .persistentReference?.itemID)
        try keychain.delete(.genericPassword(service: "svc", account: "user7"))
        expected["user7"] = nil
        let before = try keychain.statistics()
        let slotsBefore = try V3Keychain.log(keychain).state.header.slots
        let result = try keychain.compact()
        #expect(result.after.epoch == before.epoch + 1)
        #expect(result.after.fileSize < before.fileSize)
        #expect(try liveSecrets(keychain) == expected)
        try keychain.add(GenericPassword(service: "svc", account: "after", password: "x"))
        expected["after"] = Array("x".utf8)
        let reopened = try V3Keychain.open(path)
        #expect(try liveSecrets(reopened) == expected)
        #expect(try V3Keychain.log(reopened).state.replayed.tombstones[deleted] != nil)
        #expect(try V3Keychain.log(reopened).state.header.rewriteEnd > 0)
        #expect(try V3Keychain.log(reopened).state.header.slots == slotsBefore)
        // The default group's chain restarted in epoch 2 (§2.10): its page 1 follows the start value of epoch 2.
        #expect(try V3Keychain.log(reopened).state.replayed.groups[1]?.startEpoch == 2)
    }

    @Test("A batch larger than one record is written to a version 3 file as a transaction in parts and reads back whole")
    func transactionInParts() throws {
        let directory = TemporaryDirectory()
        let keychain = try V3Keychain.create(in: directory)
        let expected = try V2Keychain.fill(keychain, count: 20, perBatch: 20, secretSize: 1 << 20)
        let reopened = try V3Keychain.open(directory.file("v3.kcf"))
        #expect(try liveSecrets(reopened) == expected)
        #expect(reopened.head.sequence == 3, "the creation commit, the part, the commit")
        // Each part holds one page of the default group (a page names its secrets' lengths, not their bytes): the
        // group's chain runs through the transaction's part into its commit.
        #expect(try V3Keychain.log(reopened).state.replayed.groups[1]?.sequence == 2)
    }

    @Test("A version 3 file whose newest commit was cut by a crash opens at the commit before, and the next write goes on")
    func tornAppend() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        let kept = try V2Keychain.fill(keychain, count: 4)
        let before = try fileBytes(path)
        try keychain.add(GenericPassword(service: "svc", account: "torn", password: "lost in the crash"))
        let after = try fileBytes(path)
        // The new record's bytes reached the file, but its commit slot did not: the old slots stay.
        var torn = after
        torn.replaceSubrange(4_096..<28_672, with: before[4_096..<28_672])
        try writeFileBytes(torn, to: path)
        let reopened = try V3Keychain.open(path)
        #expect(try liveSecrets(reopened) == kept)
        #expect(reopened.tornTail != nil)
        try reopened.add(GenericPassword(service: "svc", account: "next", password: "kept"))
        #expect(try liveSecrets(V3Keychain.open(path)).count == kept.count + 1)
    }

    @Test("A rolled-back version 3 file is refused when a later head is pinned")
    func rollback() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        _ = try V2Keychain.fill(keychain, count: 3)
        let old = try fileBytes(path)
        try keychain.add(GenericPassword(service: "svc", account: "later", password: "x"))
        let pin = keychain.head
        _ = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(expectedHead: pin))
        try writeFileBytes(old, to: path)
        #expect(throws: KeychainError.rolledBack(expected: pin, found: Head(epoch: 1, sequence: 3, chainValue: []))) {
            _ = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(expectedHead: pin))
        }
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
