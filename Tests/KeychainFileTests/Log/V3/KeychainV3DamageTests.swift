import Foundation
import Testing
@testable import KeychainFile

/// Damage to a version 3 file, as a failing disk would do it: one flipped bit anywhere in a compacted file — where
/// the whole keychain sits in one record — is repaired from parity, or the open fails; it never opens with fewer
/// items, and the next write never destroys the evidence.
@Suite("Format version 3: damage")
struct KeychainV3DamageTests {
    /// A compacted version 3 file of `count` items: one record after the prefix.
    static func compactedFile(in directory: TemporaryDirectory, count: Int) throws -> (path: String, expected: [String: [UInt8]]) {
        let keychain = try V3Keychain.create(in: directory)
        let expected = try V2Keychain.fill(keychain, count: count, perBatch: count)
        try keychain.compact()
        return (directory.file("v3.kcf"), expected)
    }

    @Test("One flipped bit anywhere in a compacted version 3 file is repaired, or refused — never an emptier keychain")
    func everyPlaceOfACompactedFile() throws {
        let directory = TemporaryDirectory()
        let (path, expected) = try Self.compactedFile(in: directory, count: 30)
        let pristine = try fileBytes(path)
        var repaired = 0
        var refused = 0
        // Every 13th byte of the whole file: both runs, both commit slots, the record and its parity.
        for offset in stride(from: 0, to: pristine.count, by: 13) {
            var damaged = pristine
            damaged[offset] ^= 0x10
            try writeFileBytes(damaged, to: path)
            do {
                let keychain = try V3Keychain.open(path)
                let live = try liveSecrets(keychain)
                #expect(live == expected, "a flipped bit at byte \(offset) opened a keychain with other items")
                // The next write keeps every item.
                try keychain.add(GenericPassword(service: "other", account: "x", password: "y"))
                #expect(try liveSecrets(V3Keychain.open(path)) == expected, "a write after a flipped bit at byte \(offset) lost items")
                repaired += 1
            } catch {
                refused += 1
            }
        }
        // Parity repairs every single flipped bit of this file.
        #expect(refused == 0)
        #expect(repaired > 0)
    }

    @Test("A flipped bit in run A is reported as a header copy repaired, and put back by the next write")
    func runARepaired() throws {
        let directory = TemporaryDirectory()
        let (path, expected) = try Self.compactedFile(in: directory, count: 5)
        let pristine = try fileBytes(path)
        try flipBit(path, at: 200)
        let keychain = try V3Keychain.open(path)
        #expect(try liveSecrets(keychain) == expected)
        #expect(keychain.repairs.headerCopies == [0])
        try keychain.add(GenericPassword(service: "other", account: "x", password: "y"))
        #expect(Array(try fileBytes(path)[0..<4_096]) == Array(pristine[0..<4_096]))
    }

    @Test("A version 3 record altered beyond what parity repairs is refused as corrupted, and not cut by a write")
    func recordBeyondRepair() throws {
        let directory = TemporaryDirectory()
        let keychain = try V3Keychain.create(in: directory)
        _ = try V2Keychain.fill(keychain, count: 40, perBatch: 40, secretSize: 300)
        try keychain.compact()
        let path = directory.file("v3.kcf")
        var bytes = try fileBytes(path)
        #expect(bytes.count > 32_768 + 12_000)
        // 6,000 bytes of the record overwritten: the chunk's parity, interleaved by 256, corrects 16 bytes of each
        // codeword — 4,096 bytes in a row at most.
        for offset in 33_000..<39_000 { bytes[offset] ^= 0xA5 }
        try writeFileBytes(bytes, to: path)
        #expect(throws: KeychainError.self) { _ = try V3Keychain.open(path) }
        #expect(try fileBytes(path) == bytes)
    }
}

/// What a holder of the log key alone could write, refused by a full credential's reader (Docs/FormatVersion3.md §2.10).
@Suite("Format version 3: forgeries by a log-key holder")
struct KeychainV3ForgeryTests {
    @Test("Commits whose heads name a key id the key table lacks are refused as corrupted, naming it")
    func headOfUnknownGroup() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let keychain = try V3Keychain.create(in: directory)
        _ = try V2Keychain.fill(keychain, count: 3)
        let log = try V3Keychain.log(keychain)
        var generator = SystemRandomNumberGenerator()
        var heads = try log.currentHeads.setting(GroupHeadV3(keyID: 2, startEpoch: 1, groupSequence: 1, lastTag: [UInt8](repeating: 7, count: 16)))
        var head = keychain.head
        // Two commits, so that the first is acknowledged by the second's slot.
        for _ in 0..<2 {
            let record = try RecordV3Encoder.encode(
                kind: .commit, sequence: head.sequence + 1, part: 0, previousChain: head.chainValue, segments: [], heads: heads,
                keys: log.state.keys, using: &generator)
            try log.state.log.append(
                record.bytes, committedEnd: log.state.log.writtenEnd + record.bytes.count, headSequence: head.sequence + 1, headChain: record.chainTag)
            head = Head(epoch: head.epoch, sequence: head.sequence + 1, chainValue: record.chainTag)
            heads = record.heads
        }
        let error = #expect(throws: KeychainError.self) { _ = try V3Keychain.open(path) }
        guard case .corrupted(_, let reason)? = error else {
            Issue.record("expected corrupted, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("key id 2"), "\(reason)")
    }
}
