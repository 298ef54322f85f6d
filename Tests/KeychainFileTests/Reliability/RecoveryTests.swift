import Foundation
import Testing
@testable import KeychainFile

/// Damage costs only what it hits (SPEC.md §17): a recovering open serves every item whose boxes authenticate
/// and salvage keeps them, records after the damage included; what is lost is reported by offset and item id.
/// Format version 1, whatever the default: the tests check bits flipped at offsets of version 1's records, which version 2's parity would mend.
@Suite("Reliability: recovering open and salvage keep every authentic item")
struct RecoveryTests {
    static let password = TestKeychain.password

    /// Every generic password's service, account and secret.
    static func contents(_ keychain: Keychain) throws -> [String: String] {
        guard keychain.count > 0 else { return [:] }
        var contents: [String: String] = [:]
        for item in try keychain.find(GenericPassword.self, matching: Query(.genericPassword, limit: .all)) {
            contents["\(item.service)/\(item.account)"] = item.passwordString
        }
        return contents
    }

    static func recoveringOpen(_ path: String) throws(KeychainError) -> Keychain {
        try Keychain.open(at: path, credential: password, options: .init(recover: true))
    }

    @Test("A flipped bit in a 2,000-item compacted record costs one item: recovering open serves 1,999, salvage keeps them")
    func compactedRecord() throws {
        let directory = TemporaryDirectory()
        let path = try AcknowledgementTests.compactedKeychain(directory, count: 2_000)
        let original = try Self.contents(try Keychain.open(at: path, credential: Self.password))
        let record = try #require(recordOffsets(of: try fileBytes(path)).first)
        try flipBit(path, at: record.lowerBound + record.count / 2, bit: 4)

        let recovered = try Self.recoveringOpen(path)
        let report = try #require(recovered.recovery)
        let served = try Self.contents(recovered)
        #expect(served.count == 1_999)
        #expect(served.allSatisfy { original[$0.key] == $0.value })
        #expect(report.damage.count == 1)
        #expect(report.lostItemIDs.count + report.unidentifiedLossCount == 1)
        #expect(throws: KeychainError.invalidParameter("")) { try recovered.setPassword("x", forService: "s", account: "a") }

        let salvaged = directory.file("salvaged.kcf")
        let salvage = try Keychain.salvage(from: path, credential: Self.password, to: salvaged)
        #expect(salvage.itemCount == 1_999)
        #expect(salvage.damages.count == 1)
        #expect(try Self.contents(try Keychain.open(at: salvaged, credential: Self.password)) == served)
    }

    @Test("A flipped bit in an older compacted record: the open fails, recovery and salvage keep every other item, later records too")
    func olderCompactedRecord() throws {
        let directory = TemporaryDirectory()
        let path = try AcknowledgementTests.compactedKeychain(directory, count: 2_000)
        let keychain = try Keychain.open(at: path, credential: Self.password)
        for index in 0..<5 { try keychain.setPassword("late \(index)", forService: "late", account: "\(index)") }
        let original = try Self.contents(keychain)
        let record = try #require(recordOffsets(of: try fileBytes(path)).first)
        try flipBit(path, at: record.lowerBound + record.count / 3, bit: 4)

        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) { _ = try Keychain.open(at: path, credential: Self.password) }
        let served = try Self.contents(try Self.recoveringOpen(path))
        #expect(served.count == 2_004)
        #expect(served.allSatisfy { original[$0.key] == $0.value })
        let salvage = try Keychain.salvage(from: path, credential: Self.password, to: directory.file("salvaged.kcf"))
        #expect(salvage.itemCount == 2_004)
    }

    @Test("A log of 300 single-item records with a flipped bit in the 150th: salvage keeps 299, not the 149 before it")
    func logOfSingleRecords() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        for index in 0..<300 { try keychain.setPassword("secret \(index)", forService: "s", account: "\(index)") }
        let records = recordOffsets(of: try fileBytes(keychain.path))
        #expect(records.count == 300)
        try flipBit(keychain.path, at: records[149].upperBound - 30, bit: 4)
        let salvage = try Keychain.salvage(from: keychain.path, credential: Self.password, to: directory.file("salvaged.kcf"))
        #expect(salvage.itemCount == 299)
        let lost = try #require(salvage.damage)
        #expect(lost.loss == .item)
        #expect(lost.offset >= records[149].lowerBound && lost.offset < records[149].upperBound)
        #expect(try Self.contents(try Self.recoveringOpen(keychain.path))["s/149"] == nil)
    }

    @Test("An item whose latest version is damaged is left out and named, never served at its older version")
    func damagedLatestVersion() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try keychain.setPassword("old", forService: "s", account: "changed")
        try keychain.setPassword("kept", forService: "s", account: "other")
        let id = try #require(try keychain.search(.genericPassword(service: "s", account: "changed"), returning: .persistentReference)
            .first?.persistentReference?.itemID)
        try keychain.setPassword("new", forService: "s", account: "changed")
        try keychain.setPassword("last", forService: "s", account: "after")
        let records = recordOffsets(of: try fileBytes(keychain.path))
        // The update's attributes box: its id can only be authenticated through its secret box.
        try flipBit(keychain.path, at: records[2].lowerBound + 17 + 4 + 20, bit: 4)
        let recovered = try Self.recoveringOpen(keychain.path)
        #expect(try Self.contents(recovered) == ["s/other": "kept", "s/after": "last"])
        #expect(recovered.recovery?.lostItemIDs == [id])
    }

    @Test("Recovery of 16 MiB of hostile bytes after the records, framed or not, ends in bounded time with the items before them")
    func hostileBytesAfterTheRecords() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        for index in 0..<20 { try keychain.setPassword("\(index)", forService: "s", account: "\(index)") }
        let original = try fileBytes(keychain.path)
        var random = TestRandom(seed: 0xBAD_F11E)
        let noise = (0..<(16 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }
        // A frame header claiming the whole noise as one transaction of boxes whose lengths are random.
        let length = UInt32(noise.count - 8)
        var framed = noise
        for (index, byte) in [UInt8(length >> 24), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8),
                              UInt8(truncatingIfNeeded: length)].enumerated() {
            framed[index] = byte
            framed[index + 4] = ~byte
        }
        framed[8] = 3
        for (name, tail) in [("noise", noise), ("framed noise", framed)] {
            try writeFileBytes(original + tail, to: keychain.path)
            try? FileManager.default.removeItem(atPath: keychain.path + ".lock")
            let start = Date()
            let recovered = try Self.recoveringOpen(keychain.path)
            let seconds = Date().timeIntervalSince(start)
            #expect(recovered.count == 20, "\(name)")
            // Unframed noise is a crash remnant (a torn tail); a frame that claims it all is damage that may hold
            // acknowledged items, read box by box.
            #expect(name == "noise" ? recovered.tornTail != nil : recovered.recovery?.isDamaged == true, "\(name)")
            #expect(seconds < 20, "\(name): \(seconds) s")
            print("recovery: 16 MiB of \(name) after 20 records read in \(String(format: "%.2f", seconds)) s")
        }
    }

    @Test("A file without damage opens with recovery exactly as without, with nothing reported")
    func undamaged() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        for index in 0..<10 { try keychain.setPassword("\(index)", forService: "s", account: "\(index)") }
        let recovered = try Self.recoveringOpen(keychain.path)
        #expect(recovered.recovery == RecoveryReport(damage: []))
        #expect(try Self.contents(recovered) == (try Self.contents(keychain)))
    }
}
