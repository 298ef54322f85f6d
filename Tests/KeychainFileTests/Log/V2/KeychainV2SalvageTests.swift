import Foundation
import Testing
@testable import KeychainFile

/// Salvage and repair of version 2 files: every item that still authenticates (repaired by parity where it can
/// be) copied to a new version 2 file in the next epoch, with the same credentials, and the damage listed.
@Suite("Format version 2: salvage and repair")
struct KeychainV2SalvageTests {
    /// The file of `KeychainV2RecoveryTests.oneBigRecord` with its second page damaged beyond repair; the ids
    /// the page held.
    func damagedBeyondRepair(_ directory: TemporaryDirectory) throws -> (path: String, expected: [String: [UInt8]], lost: Set<ItemID>, unconfirmed: Set<ItemID>) {
        let (path, expected, logEnd, keys) = try KeychainV2RecoveryTests.oneBigRecord(directory)
        var damaged = try fileBytes(path)
        let log = KeychainV2RecoveryTests.logBytes(damaged, end: logEnd)
        let record = try RecordV2Decoder.scan(log, at: 0)
        let lost = try RecordV2Decoder.openPage(record.pages[1], of: record, in: log, previousChain: [], keys: keys).compactMap { entry in
            if case .put(let id, _, _) = entry { return id } else { return nil }
        }
        // The first page's items: the lost page breaks their link to the head (SPEC.md §25.3), so they are named.
        let unconfirmed = try KeychainV2RecoveryTests.onFirstPage(record, in: log, keys: keys, path: path)
        let page = record.pages[1].box
        for logical in (page.lowerBound + 12)..<(page.upperBound - 16) { damaged[HealingLayout.physical(logical)] ^= 0xFF }
        try writeFileBytes(damaged, to: path)
        return (path, expected, Set(lost), unconfirmed)
    }

    @Test("Salvage copies every item that authenticates into a new version 2 file the same password opens, and lists the damage")
    func salvage() throws {
        let directory = TemporaryDirectory()
        let (path, expected, lost, unconfirmed) = try damagedBeyondRepair(directory)
        let before = try fileBytes(path)
        let destination = directory.file("salvaged.kcf")
        let report = try Keychain.salvage(from: path, credential: TestKeychain.password, to: destination)
        #expect(costs(report.damages).count == 1)
        #expect(!unconfirmed.isEmpty && Set(report.damages.compactMap { $0.loss == .unconfirmed ? $0.itemID : nil }) == unconfirmed)
        #expect(report.itemCount == 301 - lost.count)
        #expect(try fileBytes(path) == before, "the damaged file is not changed")
        let salvaged = try Keychain.open(at: destination, credential: TestKeychain.password)
        #expect(salvaged.fileFormatVersion == 2)
        #expect(salvaged.repairs.isEmpty && salvaged.tornTail == nil)
        let served = try liveSecrets(salvaged)
        #expect(!lost.isEmpty && served.count == 300 - lost.count)
        for (account, secret) in served { #expect(expected[account] == secret, "\(account)") }
        #expect(try liveSecrets(salvaged, service: "late") == ["a": Array("after the damage".utf8)])
        try salvaged.add(GenericPassword(service: "svc", account: "new", password: "after salvage"))
    }

    @Test("Repair keeps a copy, rewrites the file with every item that authenticates, and the keychain takes writes again")
    func repair() throws {
        let directory = TemporaryDirectory()
        let (path, expected, lost, unconfirmed) = try damagedBeyondRepair(directory)
        let damaged = try fileBytes(path)
        #expect(throws: KeychainError.self) { try V2Keychain.open(path) }
        let backup = directory.file("v2.kcf.damaged")
        let report = try Keychain.repair(at: path, credential: TestKeychain.password, keepingCopyAt: backup)
        #expect(costs(report.damages).count == 1)
        #expect(!unconfirmed.isEmpty && Set(report.damages.compactMap { $0.loss == .unconfirmed ? $0.itemID : nil }) == unconfirmed)
        #expect(try fileBytes(backup) == damaged)
        let repaired = try V2Keychain.open(path)
        #expect(repaired.fileFormatVersion == 2)
        #expect(try liveSecrets(repaired).count == 300 - lost.count)
        #expect(try liveSecrets(repaired).allSatisfy { expected[$0.key] == $0.value })
        try repaired.add(GenericPassword(service: "svc", account: "new", password: "after repair"))
        #expect(try liveSecrets(V2Keychain.open(path))["new"] == Array("after repair".utf8))
    }

    @Test("Repair with a wrong password refuses before copying anything")
    func repairWrongPassword() throws {
        let directory = TemporaryDirectory()
        let (path, _, _, _) = try damagedBeyondRepair(directory)
        let damaged = try fileBytes(path)
        let backup = directory.file("v2.kcf.damaged")
        #expect(throws: KeychainError.wrongCredentials) {
            _ = try Keychain.repair(at: path, credential: .password("wrong"), keepingCopyAt: backup)
        }
        #expect(!FileManager.default.fileExists(atPath: backup))
        #expect(try fileBytes(path) == damaged)
    }
}
