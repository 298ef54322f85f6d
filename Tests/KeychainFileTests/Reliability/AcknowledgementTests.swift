import Foundation
import Testing
@testable import KeychainFile
import KeychainCrypto

/// A final record that fails verification is a crash remnant only when nothing shows it was acknowledged
/// (SPEC.md §9.2, §16.1): damage to an acknowledged record — after a compaction, the whole keychain — is
/// `corrupted`, and no write cuts it off.
/// Format version 1, whatever the default: the tests check the lock file's acknowledgement of version 1's records (SPEC.md §16.1).
@Suite("Reliability: acknowledged records are never taken for torn tails")
struct AcknowledgementTests {
    /// A keychain of `count` generic passwords, compacted into records of up to 4,096 items each.
    static func compactedKeychain(_ directory: TemporaryDirectory, count: Int) throws -> String {
        let path = directory.file("compacted.kcf")
        let keychain = try TestKeychain.create(in: directory, name: "compacted.kcf", formatVersion: 1)
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<count {
                try batch.add(GenericPassword(service: "service \(index)", account: "account", password: "secret \(index)"))
            }
        }
        try keychain.compact()
        return path
    }

    static func open(_ path: String) throws(KeychainError) -> Keychain {
        try Keychain.open(at: path, credential: TestKeychain.password)
    }

    @Test("One flipped bit in a compacted keychain's only record: corrupted with the lock file; without it, a tail no write, compaction or credential change cuts")
    func compactedRecordDamage() throws {
        let directory = TemporaryDirectory()
        let path = try Self.compactedKeychain(directory, count: 2_000)
        let records = recordOffsets(of: try fileBytes(path))
        #expect(records.count == 1)
        let record = try #require(records.first)
        try flipBit(path, at: record.lowerBound + record.count / 2)
        let damaged = try fileBytes(path)

        // The lock file holds the compaction's acknowledgement: the record is acknowledged damage.
        do {
            let keychain = try Self.open(path)
            Issue.record("a damaged compacted keychain opened with \(keychain.count) items")
        } catch {
            guard case .corrupted(let offset, let reason) = error else { throw error }
            #expect(offset == record.lowerBound)
            #expect(reason.contains("acknowledged as committed"))
        }
        // Without it (a copy moved elsewhere), nothing shows that the record was never acknowledged: the open
        // reports a tail that may hold committed items, and nothing writes over it.
        try FileManager.default.removeItem(atPath: path + ".lock")
        let keychain = try Self.open(path)
        let tail = try #require(keychain.tornTail)
        #expect(tail.offset == record.lowerBound && tail.byteCount == record.count)
        #expect(tail.mayHoldAcknowledgedData)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try keychain.setPassword("x", forService: "new", account: "a") }
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try keychain.compact() }
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) {
            try keychain.changePassword(from: "correct horse battery staple", to: "another password")
        }
        #expect(try fileBytes(path) == damaged)
    }

    /// A keychain with two single-put records, and the lock file's acknowledgement after the first only.
    static func twoRecordsWithFirstAcknowledged(_ directory: TemporaryDirectory) throws -> (path: String, second: Range<Int>) {
        let path = directory.file("test.kcf")
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try keychain.setPassword("one", forService: "s", account: "1")
        let lock = try Data(contentsOf: URL(fileURLWithPath: path + ".lock"))
        try keychain.setPassword("two", forService: "s", account: "2")
        // As if the process had died after making the second record durable and before acknowledging it.
        try lock.write(to: URL(fileURLWithPath: path + ".lock"))
        let records = recordOffsets(of: try fileBytes(path))
        #expect(records.count == 2)
        return (path, records[1])
    }

    @Test("A whole final record the lock file never acknowledged is a crash remnant: dropped, and cut by the next write")
    func unacknowledgedFinalRecordIsTorn() throws {
        let directory = TemporaryDirectory()
        let (path, second) = try Self.twoRecordsWithFirstAcknowledged(directory)
        try flipBit(path, at: second.upperBound - 20)
        let keychain = try Self.open(path)
        #expect(keychain.count == 1)
        #expect(keychain.tornTail?.offset == second.lowerBound)
        #expect(keychain.tornTail?.reason.contains("never acknowledged") == true)
        try keychain.setPassword("three", forService: "s", account: "3")
        let reopened = try Self.open(path)
        #expect(reopened.count == 2)
        #expect(reopened.tornTail == nil)
    }

    @Test("A damaged final record the lock file acknowledged is corrupted, and so is a file cut below its acknowledged end")
    func acknowledgedFinalRecordIsDamage() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try keychain.setPassword("one", forService: "s", account: "1")
        try keychain.setPassword("two", forService: "s", account: "2")
        let original = try fileBytes(path)
        let records = recordOffsets(of: original)
        try flipBit(path, at: records[1].upperBound - 20)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { _ = try Self.open(path) }
        #expect(try fileBytes(path).count == original.count)

        // Cut back to the first record: what was acknowledged is missing, as if the file were rolled back.
        try writeFileBytes(Array(original[..<records[1].lowerBound]), to: path)
        #expect(throws: KeychainError.rolledBack(expected: keychain.head, found: keychain.head)) { _ = try Self.open(path) }
    }

    @Test("A whole final record with a damaged length may hold acknowledged data when nothing shows it was not acknowledged")
    func damagedLengthOfWholeFinalRecord() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try keychain.setPassword("one", forService: "s", account: "1")
        try keychain.setPassword("two", forService: "s", account: "2")
        try FileManager.default.removeItem(atPath: path + ".lock")
        let records = recordOffsets(of: try fileBytes(path))
        for (offset, bit) in [(records[1].lowerBound + 3, 0), (records[1].lowerBound + 7, 5)] {
            let copy = directory.file("copy-\(offset)-\(bit).kcf")
            try writeFileBytes(try fileBytes(path), to: copy)
            try flipBit(copy, at: offset, bit: bit)
            let keychain = try Self.open(copy)
            #expect(keychain.count == 1)
            #expect(keychain.tornTail?.offset == records[1].lowerBound)
            #expect(keychain.tornTail?.mayHoldAcknowledgedData == true)
            #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try keychain.setPassword("x", forService: "s", account: "3") }
        }
    }

    @Test("The acknowledgement is authenticated and bound to its file and epoch")
    func acknowledgementIsAuthenticated() throws {
        let key = SymmetricKey(data: [UInt8](repeating: 0x11, count: 32))
        let fileID = [UInt8](repeating: 7, count: 16)
        let ack = Acknowledgement(fileID: fileID, head: Head(epoch: 3, sequence: 9, chainValue: [UInt8](repeating: 5, count: 16)), end: 4_242)
        let bytes = ack.encode(headerKey: key)
        #expect(bytes.count == Acknowledgement.size)
        #expect(Acknowledgement.read(bytes, fileID: fileID, epoch: 3, headerKey: key) == ack)
        #expect(Acknowledgement.read(bytes, fileID: fileID, epoch: 4, headerKey: key) == nil)
        #expect(Acknowledgement.read(bytes, fileID: [UInt8](repeating: 8, count: 16), epoch: 3, headerKey: key) == nil)
        #expect(Acknowledgement.read(bytes, fileID: fileID, epoch: 3, headerKey: SymmetricKey(data: [UInt8](repeating: 0x12, count: 32))) == nil)
        for index in bytes.indices {
            var flipped = bytes
            flipped[index] ^= 0x01
            #expect(Acknowledgement.read(flipped, fileID: fileID, epoch: 3, headerKey: key) == nil)
        }
    }
}
