import Foundation
import Testing
@testable import KeychainFile

/// What a version 3 keychain's statistics say of its file: live bytes are an estimate (version 2's entry sizes with
/// the parity, header runs and commit slots a compacted file has), never more than the file holds. (Before session
/// 52 a compacted file of 400 items showed 109,940 live bytes in a file of 109,713.)
@Suite("Format version 3: statistics")
struct KeychainV3StatisticsTests {
    @Test("Live bytes are never more than the file, after creation, adds, a compaction, and deletions", arguments: [0, 1, 3, 40, 400])
    func liveWithinTheFile(count: Int) throws {
        let directory = TemporaryDirectory()
        let keychain = try V3Keychain.create(in: directory)
        func check(_ step: String) throws {
            let statistics = try keychain.statistics()
            #expect(statistics.liveBytes <= statistics.fileSize, "\(step): \(statistics.liveBytes) live bytes in a file of \(statistics.fileSize)")
            #expect(statistics.liveBytes + statistics.deadBytes == statistics.fileSize, "\(step)")
        }
        try check("new")
        if count > 0 { _ = try V2Keychain.fill(keychain, count: count, perBatch: 7) }
        try check("filled")
        _ = try keychain.compact()
        try check("compacted")
        for number in stride(from: 0, to: count, by: 2) {
            try keychain.delete(.genericPassword(service: "svc", account: "user\(number)"))
        }
        try check("half deleted")
    }
}
