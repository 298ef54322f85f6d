import Foundation
import Testing
@testable import KeychainFile

/// Replay applies a record's entries piece by piece as they are verified (``ItemIndex/PiecewiseApplication``):
/// new items go straight in until a piece holds anything else, and a record that fails is taken out again.
/// These tests cross each switch with records of several thousand entries, so that there are many pieces, under
/// the sequential decoder and the windowed one.
/// Format version 1, whatever the default: the tests check version 1's records, replayed piece by piece, damaged at their offsets.
@Suite("Large records are replayed piece by piece with the result and the failures of a whole-record replay")
struct PiecewiseReplayTests {
    /// The sequential loop (pieces of 1,024 entries) and the windowed decoder with small windows.
    static let tunings: [ParallelTuning] = [
        .sequential, ParallelTuning(workerCount: 2, minimumParallelEntries: 2, windowSize: 4_096),
        ParallelTuning(workerCount: 2, minimumParallelEntries: 2, windowSize: 65_536),
    ]

    private func seed(_ keychain: Keychain) throws {
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<50 { try batch.add(GenericPassword(service: "old", account: "o\(index)", password: "po\(index)")) }
        }
    }

    private func open(_ path: String, _ tuning: ParallelTuning) throws -> Keychain {
        try ParallelTuning.$current.withValue(tuning) { try Keychain.open(at: path, credential: TestKeychain.password) }
    }

    @Test("A large record whose last entries update and delete replays to what was committed")
    func plainThenPlanned() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try seed(keychain)
        // 3,000 new items, then entries that are not: the pieces of new items are put in and taken out again.
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<3_000 { try batch.add(GenericPassword(service: "new", account: "n\(index)", password: "pn\(index)")) }
            try batch.update(.genericPassword(service: "old", account: "o7"), setting: [:], secret: Array("changed".utf8))
            try batch.delete(.genericPassword(service: "old", account: "o8"))
            try batch.delete(.genericPassword(service: "new", account: "n2999"))
            // The key of an item deleted in the same record, taken by a new one.
            try batch.add(GenericPassword(service: "old", account: "o8", password: "again"))
        }
        let expected = try genericPasswordSnapshot(keychain)
        #expect(keychain.count == 50 + 3_000 - 1)
        for tuning in Self.tunings {
            let reopened = try open(keychain.path, tuning)
            #expect(try genericPasswordSnapshot(reopened) == expected, "window \(tuning.windowSize)")
            #expect(try reopened.password(forService: "old", account: "o8") == "again")
            #expect(try reopened.password(forService: "old", account: "o7") == "changed")
        }
    }

    @Test("A large final record damaged near its end is set aside whole as a tail no write cuts; damaged before another, it is corruption")
    func damagedLargeRecord() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory, formatVersion: 1)
        try seed(keychain)
        let before = try genericPasswordSnapshot(keychain)
        let sizeBefore = try fileBytes(keychain.path).count
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<3_000 { try batch.add(GenericPassword(service: "new", account: "n\(index)", password: "pn\(index)")) }
        }
        var bytes = try fileBytes(keychain.path)
        // A byte of the last secret box: every piece before it verified and went in first.
        bytes[bytes.count - 20] ^= 0x01
        let damaged = directory.file("damaged.kcf")
        try writeFileBytes(bytes, to: damaged)
        for tuning in Self.tunings {
            let reopened = try open(damaged, tuning)
            #expect(reopened.tornTail?.offset == sizeBefore, "window \(tuning.windowSize)")
            #expect(reopened.count == 50)
            #expect(try genericPasswordSnapshot(reopened) == before)
            #expect(throws: KeychainError.itemNotFound) { try reopened.password(forService: "new", account: "n0") }
        }
        // Nothing shows the record was never acknowledged (the copy has no lock file): it may hold committed
        // items, so no write cuts it off (SPEC.md §16.1) until it is repaired.
        let reopened = try open(damaged, .sequential)
        #expect(reopened.tornTail?.mayHoldAcknowledgedData == true)
        #expect(throws: KeychainError.corrupted(offset: 0, reason: "")) {
            try reopened.add(GenericPassword(service: "new", account: "n0", password: "after"))
        }
        #expect(try fileBytes(damaged) == bytes)

        // The same damage with a record after it is corruption; salvage keeps every item but the one it hits.
        try keychain.add(GenericPassword(service: "later", account: "l", password: "l"))
        bytes = try fileBytes(keychain.path)
        bytes[sizeBefore + 20_000] ^= 0x01
        try writeFileBytes(bytes, to: damaged)
        for tuning in Self.tunings {
            let error = #expect(throws: KeychainError.self, "window \(tuning.windowSize)") { try open(damaged, tuning) }
            guard case .corrupted(let offset, _)? = error else {
                Issue.record("expected corruption, got \(String(describing: error))")
                continue
            }
            #expect(offset > sizeBefore && offset <= sizeBefore + 20_000)
        }
        let salvaged = directory.file("salvaged.kcf")
        let report = try Keychain.salvage(from: damaged, credential: TestKeychain.password, to: salvaged)
        #expect(report.itemCount == 50 + 2_999 + 1)
        #expect(report.damages.count == 1 && report.damage?.loss == .item)
        let kept = try genericPasswordSnapshot(try open(salvaged, .sequential))
        #expect(Set(before).isSubset(of: Set(kept)))
    }
}
