import Foundation
import Testing
@testable import KeychainFile

/// Records larger than the piece the encoder holds in memory (``RecordEncoder/chunkSize``), which are sealed
/// and written piece by piece with the frame header last, and compaction, which gives the keychain's own
/// items their new sealed secrets instead of building a second index.
/// Format version 1, whatever the default: the tests check version 1's record frames, read from the file by their layout.
@Suite("Large records and compaction in place")
struct LargeRecordTests {
    /// Five items of 300,000-byte secrets: one record of about 1.5 MB, more than one piece.
    static let largeSecrets = (0..<5).map { index in [UInt8](repeating: UInt8(0x41 + index), count: 300_000) }

    static func addLargeBatch(to keychain: Keychain) throws {
        try keychain.batch { (batch) throws(KeychainError) in
            for (index, secret) in largeSecrets.enumerated() {
                try batch.add(GenericPassword(service: "large", account: "a\(index)").attributes, secret: secret)
            }
        }
    }

    /// A keychain with one small item (the first record) and then the large batch (the second).
    static func makeKeychainWithLargeBatch(in directory: TemporaryDirectory) throws -> Keychain {
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try keychain.add(GenericPassword(service: "small", account: "first").attributes, secret: Array("one".utf8))
        try addLargeBatch(to: keychain)
        return keychain
    }

    @Test("A batch larger than one piece is one record of the right length, and reads back whole")
    func largeBatchRoundTrips() throws {
        let directory = TemporaryDirectory()
        let keychain = try Self.makeKeychainWithLargeBatch(in: directory)
        let records = recordOffsets(of: try fileBytes(keychain.path))
        #expect(records.count == 2)
        #expect(records.last!.count > RecordEncoder.chunkSize, "the batch's record spans more than one piece")
        #expect(records.last!.upperBound == (try keychain.statistics().fileSize))

        let reopened = try Keychain.open(at: keychain.path, credential: TestKeychain.password)
        #expect(reopened.tornTail == nil)
        #expect(reopened.count == 6)
        for (index, secret) in Self.largeSecrets.enumerated() {
            #expect(try reopened.data(forService: "large", account: "a\(index)") == secret)
            #expect(try keychain.data(forService: "large", account: "a\(index)") == secret)
        }
    }

    @Test("A large record whose first piece (with the frame header) never reached the disk is a torn tail")
    func missingFirstPieceIsTornTail() throws {
        let directory = TemporaryDirectory()
        let keychain = try Self.makeKeychainWithLargeBatch(in: directory)
        let bytes = try fileBytes(keychain.path)
        let last = recordOffsets(of: bytes).last!
        // What a crash before the last write can leave: the later pieces written, the first one not (zeros, or
        // the file cut anywhere inside the record).
        var zeroed = bytes
        for position in last.lowerBound..<(last.lowerBound + RecordEncoder.chunkSize) { zeroed[position] = 0 }
        let cuts = [last.lowerBound + 1, last.lowerBound + RecordEncoder.chunkSize, last.upperBound - 1]
        for (name, copy) in [("zeroed first piece", zeroed)] + cuts.map({ ("cut at \($0)", Array(bytes[0..<$0])) }) {
            let path = directory.file("copy.kcf")
            try writeFileBytes(copy, to: path)
            let opened = try Keychain.open(at: path, credential: TestKeychain.password)
            #expect(opened.count == 1, "\(name)")
            #expect(opened.tornTail?.offset == last.lowerBound, "\(name)")
            // The next write replaces the torn record.
            try opened.add(GenericPassword(service: "small", account: "second").attributes, secret: Array("two".utf8))
            let again = try Keychain.open(at: path, credential: TestKeychain.password)
            #expect(again.tornTail == nil, "\(name)")
            #expect(again.count == 2, "\(name)")
            try FileManager.default.removeItem(atPath: path)
            // With the copy's lock file gone too: its acknowledgement of the add above would make the next copy
            // (the same keychain, shorter) an older copy put back, which opening refuses.
            try FileManager.default.removeItem(atPath: path + ".lock")
        }
    }

    @Test("After compaction the keychain holds what a fresh open of the new file holds, in the same order")
    func compactionInPlaceEqualsReopen() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        keychain.autoCompaction = .disabled
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<300 {
                try batch.add(GenericPassword(service: "s\(index % 7)", account: "a\(index)").attributes, secret: [UInt8(index % 251), 1, 2])
            }
        }
        for index in stride(from: 0, to: 300, by: 3) {
            try keychain.update(.genericPassword(service: "s\(index % 7)", account: "a\(index)"), setting: [.label: .string("l\(index)")],
                                secret: [UInt8(index % 251), 9])
        }
        for index in stride(from: 1, to: 300, by: 5) {
            try keychain.delete(.genericPassword(service: "s\(index % 7)", account: "a\(index)"))
        }
        let before = try KeychainSnapshot(keychain)
        let result = try keychain.compact()
        #expect(result.after.epoch == result.before.epoch + 1)
        #expect(result.after.fileSize < result.before.fileSize)

        let reopened = try Keychain.open(at: keychain.path, credential: TestKeychain.password)
        #expect(try KeychainSnapshot(keychain) == before, "the compacted keychain's items and secrets are unchanged")
        #expect(try KeychainSnapshot(reopened) == before)
        #expect(try keychain.statistics() == (try reopened.statistics()), "live and dead bytes as a fresh open counts them")
        for service in 0..<7 {
            let query = Query.genericPassword(service: "s\(service)")
            let inPlace = try keychain.find(GenericPassword.self, matching: query).map(\.account)
            let fresh = try reopened.find(GenericPassword.self, matching: query).map(\.account)
            #expect(inPlace == fresh, "service s\(service): results in the same order")
        }
        // Both go on: a change through the compacted object is read by the other after catching up.
        try keychain.update(.genericPassword(service: "s0", account: "a0"), setting: [:], secret: Array("after".utf8))
        #expect(try reopened.data(forService: "s0", account: "a0") == Array("after".utf8))
    }
}

extension LargeRecordTests {
    @Test("Damage to a box beyond the first window of a large record that is not the last is corrupted at that box")
    func damageDeepInsideLargeRecord() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try Self.addLargeBatch(to: keychain)
        try keychain.add(GenericPassword(service: "small", account: "after").attributes, secret: Array("two".utf8))
        let bytes = try fileBytes(keychain.path)
        let records = recordOffsets(of: bytes)
        #expect(records.count == 2)
        // The large record ends with the last item's secret box (300,000 bytes sealed: 300,028), more than a
        // window (RecordEncoder.chunkSize) after the record's start.
        let lastSecretBox = records[0].upperBound - 300_028
        #expect(lastSecretBox - records[0].lowerBound > RecordEncoder.chunkSize)
        var damaged = bytes
        damaged[lastSecretBox + 1_000] ^= 0x01
        let path = directory.file("damaged.kcf")
        try writeFileBytes(damaged, to: path)
        #expect(throws: KeychainError.corrupted(offset: lastSecretBox, reason: "secret box does not authenticate")) {
            try Keychain.open(at: path, credential: TestKeychain.password)
        }
        // As the final record, the same damage is a torn tail.
        try writeFileBytes(Array(damaged[0..<records[0].upperBound]), to: path)
        let opened = try Keychain.open(at: path, credential: TestKeychain.password)
        #expect(opened.count == 0)
        #expect(opened.tornTail?.offset == records[0].lowerBound)
    }
}
