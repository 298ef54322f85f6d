import Foundation
import Testing
@testable import KeychainFile

/// The progress handlers of the long operations (compaction, upgrade, salvage, repair): called as the new file's
/// items are written, counting up to all of them, with the count the file then holds.
@Suite("Progress of compaction, upgrade, salvage and repair")
struct OperationProgressTests {
    /// The reports a handler received, from whichever thread.
    final class Reports: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [OperationProgress] = []
        func append(_ progress: OperationProgress) { lock.withLock { values.append(progress) } }
        var all: [OperationProgress] { lock.withLock { values } }
    }

    /// A keychain of `count` generic passwords, of format `version`, without automatic compaction.
    static func keychain(in directory: TemporaryDirectory, count: Int, version: Int) throws -> Keychain {
        var options = TestKeychain.options(formatVersion: version)
        options.autoCompaction = .disabled
        let keychain = try Keychain.create(at: directory.file("p.kcf"), credential: TestKeychain.password, options: options)
        var added = 0
        while added < count {
            let end = min(count, added + 2_000)
            try keychain.batch { (batch) throws(KeychainError) in
                for number in added..<end { try batch.add(GenericPassword(service: "svc", account: "user\(number)", password: "pw\(number)")) }
            }
            added = end
        }
        return keychain
    }

    /// Checks that `reports` count up, end at `total` of `total`, and come at least `minimum` times.
    static func expectCountsUp(_ reports: [OperationProgress], total: Int, minimum: Int, _ comment: Comment) {
        #expect(reports.count >= minimum, "\(reports.count) reports: \(comment)")
        #expect(reports.allSatisfy { $0.total == total && $0.completed <= total }, comment)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.completed < $1.completed }, "counting up: \(comment)")
        #expect(reports.last == OperationProgress(completed: total, total: total), comment)
    }

    @Test("A compaction reports the items written, record by record, up to all of them; in both format versions", arguments: [2, 1])
    func compaction(version: Int) throws {
        let directory = TemporaryDirectory()
        let keychain = try Self.keychain(in: directory, count: 10_000, version: version)
        let reports = Reports()
        try keychain.compact { reports.append($0) }
        // Version 2 writes a record for every 4,096 items; version 1 for every 4,096 items or 4 MiB of secrets.
        Self.expectCountsUp(reports.all, total: 10_000, minimum: 3, "version \(version)")
        // The handler was for that call only: a compaction without one reports nothing to it.
        let before = reports.all.count
        try keychain.compact()
        #expect(reports.all.count == before)
    }

    @Test("An empty keychain's compaction reports once: 0 of 0")
    func emptyCompaction() throws {
        let directory = TemporaryDirectory()
        let keychain = try Self.keychain(in: directory, count: 0, version: 2)
        let reports = Reports()
        try keychain.compact { reports.append($0) }
        #expect(reports.all == [OperationProgress(completed: 0, total: 0)])
        #expect(reports.all.first?.fractionCompleted == 1)
    }

    @Test("An upgrade, a salvage and a repair report the items they write")
    func upgradeSalvageRepair() throws {
        let directory = TemporaryDirectory()
        let keychain = try Self.keychain(in: directory, count: 5_000, version: 1)
        let upgrade = Reports()
        #expect(try keychain.upgradeFormat { upgrade.append($0) })
        Self.expectCountsUp(upgrade.all, total: 5_000, minimum: 2, "upgrade")

        let salvage = Reports()
        let report = try Keychain.salvage(
            from: directory.file("p.kcf"), credential: TestKeychain.password, to: directory.file("saved.kcf")) { salvage.append($0) }
        #expect(report.itemCount == 5_000)
        Self.expectCountsUp(salvage.all, total: 5_000, minimum: 2, "salvage")

        let repair = Reports()
        _ = try Keychain.repair(
            at: directory.file("p.kcf"), credential: TestKeychain.password, keepingCopyAt: directory.file("p.kcf.copy")) { repair.append($0) }
        Self.expectCountsUp(repair.all, total: 5_000, minimum: 2, "repair")
    }
}
