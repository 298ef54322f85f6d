import Foundation
import Testing
@testable import KeychainFile

/// The statistics of a format version 2 file: its parity and fixed prefix are not dead bytes, so a file with
/// nothing overwritten or deleted has almost nothing to reclaim, and automatic compaction is not set off by them.
@Suite("Format version 2: live and dead bytes")
struct KeychainV2StatisticsTests {
    /// 3,000 items with 700-byte secrets, in batches: about 2.5 MB of records over some 45 chunks of parity.
    func filled(_ directory: TemporaryDirectory, autoCompaction: AutoCompaction = .disabled) throws -> Keychain {
        var options = TestKeychain.options(formatVersion: 2)
        options.autoCompaction = autoCompaction
        let keychain = try Keychain.create(at: directory.file("v2.kcf"), credential: TestKeychain.password, options: options)
        for batch in 0..<6 {
            try keychain.batch { (batch_) throws(KeychainError) in
                for index in 0..<500 {
                    try batch_.add(GenericPassword(service: "svc", account: "user \(batch) \(index)",
                                                   password: String(repeating: "x", count: 700)))
                }
            }
        }
        return keychain
    }

    @Test("With nothing overwritten or deleted, under 2 % of the file is dead; after deleting half, about half")
    func parityIsNotDead() throws {
        let directory = TemporaryDirectory()
        let keychain = try filled(directory)
        let statistics = try keychain.statistics()
        #expect(statistics.fileSize > 2_000_000)
        #expect(statistics.deadShare < 0.02, "\(statistics)")
        #expect(statistics.liveBytes + statistics.deadBytes == statistics.fileSize)
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<500 { try batch.delete(.genericPassword(service: "svc", account: "user 0 \(index)")) }
            for index in 0..<500 { try batch.delete(.genericPassword(service: "svc", account: "user 1 \(index)")) }
            for index in 0..<500 { try batch.delete(.genericPassword(service: "svc", account: "user 2 \(index)")) }
        }
        let half = try keychain.statistics()
        #expect(half.deadShare > 0.45 && half.deadShare < 0.55, "\(half)")
        // A compacted file is about its live bytes.
        let result = try keychain.compact()
        #expect(abs(result.after.fileSize - result.before.liveBytes) < result.before.liveBytes / 50, "\(result)")
        #expect(result.after.deadShare < 0.02, "\(result.after)")
    }

    @Test("Parity does not set off automatic compaction: none runs on a file with nothing dead")
    func noAutoCompactionWithoutDeadItems() throws {
        let directory = TemporaryDirectory()
        // A threshold just under the parity's share: parity counted as dead would set it off.
        let keychain = try filled(directory, autoCompaction: AutoCompaction(deadShare: 0.1, minimumFileSize: 0))
        let statistics = try keychain.statistics()
        #expect(keychain.head.epoch == 1, "compacted on its own with nothing dead: \(statistics)")
    }
}
