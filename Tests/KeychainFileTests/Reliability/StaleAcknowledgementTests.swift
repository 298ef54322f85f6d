import Foundation
import Testing
@testable import KeychainFile

/// What an independent review found in the first version of the acknowledgement and the recovering reader,
/// kept as regression tests: a stale or failed acknowledgement never lets acknowledged damage pass for a crash
/// remnant, a recovering open honours a pin, repair refuses what writes refuse, and hostile bytes cost bounded
/// time.
/// Format version 1, whatever the default: the tests check the lock file's acknowledgement of version 1's records (SPEC.md §16.1).
@Suite("Reliability: stale acknowledgements, pins and repair")
struct StaleAcknowledgementTests {
    /// A keychain with the item 1, then 2, then what `third` writes, whose lock file still acknowledges only the
    /// first record (as a process that died, or an implementation without acknowledgements, would leave it).
    static func keychainWithStaleAcknowledgement(
        _ directory: TemporaryDirectory, third: (Keychain) throws -> Void
    ) throws -> String {
        let path = directory.file("test.kcf")
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try keychain.setPassword("one", forService: "s", account: "1")
        let lock = try Data(contentsOf: URL(fileURLWithPath: path + ".lock"))
        try keychain.setPassword("two", forService: "s", account: "2")
        try third(keychain)
        try lock.write(to: URL(fileURLWithPath: path + ".lock"))
        return path
    }

    @Test("An acknowledgement two records old does not make damage to the final record a crash remnant")
    func staleAcknowledgement() throws {
        let directory = TemporaryDirectory()
        let path = try Self.keychainWithStaleAcknowledgement(directory) { keychain in
            try keychain.setPassword("three", forService: "s", account: "3")
        }
        let records = recordOffsets(of: try fileBytes(path))
        try flipBit(path, at: records[2].upperBound - 20)
        let damaged = try fileBytes(path)
        let reopened = try Keychain.open(at: path, credential: TestKeychain.password)
        #expect(reopened.tornTail?.mayHoldAcknowledgedData == true)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try reopened.setPassword("four", forService: "s", account: "4") }
        #expect(try fileBytes(path) == damaged)
    }

    @Test("A failed acknowledgement is withdrawn, so later damage to that record is never cut; if neither works, the write says so")
    func failedAcknowledgement() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let fileSystem = FaultyFileSystem()
        let keychain = try Keychain.createForTesting(at: path, fileSystem: fileSystem, options: TestKeychain.versionOneOptions)
        try keychain.setPassword("one", forService: "s", account: "1")
        fileSystem.failAcknowledgementWrites = 1
        try keychain.setPassword("two", forService: "s", account: "2")
        #expect(Array(try fileBytes(path + ".lock")[Acknowledgement.offset..<(Acknowledgement.offset + 4)]) == [0, 0, 0, 0])
        let records = recordOffsets(of: try fileBytes(path))
        try flipBit(path, at: records[1].upperBound - 20)
        let damaged = try fileBytes(path)
        let reopened = try Keychain.open(at: path, credential: TestKeychain.password)
        #expect(reopened.tornTail?.mayHoldAcknowledgedData == true)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { try reopened.setPassword("three", forService: "s", account: "3") }
        #expect(try fileBytes(path) == damaged)

        let other = directory.file("other.kcf")
        let second = try Keychain.createForTesting(at: other, fileSystem: fileSystem, options: TestKeychain.versionOneOptions)
        fileSystem.failAcknowledgementWrites = 2
        #expect(throws: KeychainError.notConfirmedDurable(operation: "", reason: "")) {
            try second.setPassword("x", forService: "s", account: "x")
        }
        #expect(try second.password(forService: "s", account: "x") == "x")
    }

    @Test("With a stale acknowledgement, a recovering open and repair keep a repairable final record")
    func staleAcknowledgementRecovery() throws {
        let directory = TemporaryDirectory()
        let path = try Self.keychainWithStaleAcknowledgement(directory) { keychain in
            try keychain.batch { (batch) throws(KeychainError) in
                try batch.add(GenericPassword(service: "s", account: "3a", password: "three a"))
                try batch.add(GenericPassword(service: "s", account: "3b", password: "three b"))
            }
        }
        let records = recordOffsets(of: try fileBytes(path))
        // The first attributes box's length (frame 8, kind 1, sequence 8, count 4, entry kind 1).
        try flipBit(path, at: records[2].lowerBound + 22 + 3, bit: 1)
        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        #expect(recovered.count == 4)
        let report = try Keychain.repair(at: path, credential: TestKeychain.password, keepingCopyAt: directory.file("backup"))
        #expect(report.itemCount == 4)
    }

    @Test("A recovering open with a pin refuses a rolled-back copy that ends in a forged frame header")
    func recoveringOpenHonoursPin() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try keychain.setPassword("v1", forService: "s", account: "x")
        let old = try fileBytes(path)
        try keychain.setPassword("v2", forService: "s", account: "x")
        try keychain.setPassword("v3", forService: "s", account: "x")
        let pin = keychain.head
        var forged = old
        let bodyLength: UInt32 = 52
        for value in [bodyLength, ~bodyLength] {
            forged += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        forged += [1, 0, 0, 0, 0, 0, 0, 0, 100] + [UInt8](repeating: 0xAB, count: Int(bodyLength) - 9)
        try FileManager.default.removeItem(atPath: path + ".lock")
        try writeFileBytes(forged, to: path)
        #expect(throws: KeychainError.rolledBack(expected: pin, found: pin)) {
            _ = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(expectedHead: pin, recover: true))
        }
    }

    @Test("Repair checks the password before copying anything, and refuses a hard-linked file as writes do")
    func repairRefusals() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try keychain.setPassword("v1", forService: "s", account: "x")
        #expect(throws: KeychainError.wrongCredentials) {
            _ = try Keychain.repair(at: path, credential: .password("wrong"), keepingCopyAt: directory.file("backup1"))
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("backup1")))
        #expect(link(path, directory.file("other.kcf")) == 0)
        #expect(throws: KeychainError.readOnly(path: "", reason: "")) {
            _ = try Keychain.repair(at: path, credential: TestKeychain.password, keepingCopyAt: directory.file("backup2"))
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("backup2")))
    }

    @Test("A 2 MB transaction of garbage boxes is read with recovery in bounded time")
    func hostileBoxes() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("test.kcf")
        _ = try TestKeychain.create(in: directory, formatVersion: 1)
        var bytes = try fileBytes(path)
        try FileManager.default.removeItem(atPath: path + ".lock")
        let entries = 32_000
        var body: [UInt8] = [3, 0, 0, 0, 0, 0, 0, 0, 1]
        let count = UInt32(entries)
        body += [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
        var random = TestRandom(seed: 0x6A4B_A6E)
        for _ in 0..<entries {
            body.append(1)
            for _ in 0..<2 { body += [0, 0, 0, 28] + (0..<28).map { _ in UInt8.random(in: 0...255, using: &random) } }
        }
        let length = UInt32(body.count)
        for value in [length, ~length] { bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        try writeFileBytes(bytes + body, to: path)
        let start = Date()
        let recovered = try Keychain.open(at: path, credential: TestKeychain.password, options: .init(recover: true))
        let seconds = Date().timeIntervalSince(start)
        print("recovery: \(bytes.count + body.count) bytes of garbage boxes read in \(String(format: "%.2f", seconds)) s")
        #expect(recovered.count == 0 && recovered.recovery?.isDamaged == true)
        #expect(seconds < 30)
    }
}
