import Foundation
import Testing
@testable import KeychainFile

/// Many threads on one file, each with a `Keychain` object of its own, so that they coordinate through the
/// lock file and reload each other's rewrites (SPEC.md §16) as processes do: stress threads (ThreadStressTests)
/// write their own items, a maintenance thread commits batches, compacts, rotates the master key and adds and
/// removes a second credential, and a reader checks that it only ever sees whole batches. Run under
/// `swift test --sanitize=thread` as well (Scripts/thread-sanitizer.sh).
@Suite("Threads with their own Keychain objects on one file")
struct ThreadStressSharedFileTests {
    static let stressThreads = 4
    static let operationsPerThread = 200
    static let maintenanceRounds = 40
    static let batchService = "batch"
    static let batchSize = 3

    @Test("4 stress threads, batches, compactions and credential changes on separate objects: contents and counts exact")
    func separateObjects() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("shared.kcf")
        _ = try Keychain.create(at: path, credential: TestKeychain.password, options: TestKeychain.fastOptions)

        let outcomes = StressOutcomes()
        let maintenance = MaintenanceOutcome()
        let group = DispatchGroup()
        func start(_ body: @escaping @Sendable () -> Void) {
            group.enter()
            let thread = Thread {
                body()
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        for number in 0..<Self.stressThreads {
            let keychain = try Keychain.open(at: path, credential: TestKeychain.password)
            start {
                var stress = StressThread(number: number, keychain: keychain)
                outcomes.record(stress.run(operations: Self.operationsPerThread))
            }
        }
        let maintainer = try Keychain.open(at: path, credential: TestKeychain.password)
        start { maintenance.finish(Self.maintain(maintainer)) }
        let reader = try Keychain.open(at: path, credential: TestKeychain.password)
        let readerFailures = MaintenanceOutcome()
        start { readerFailures.finish(Self.readBatches(reader, until: maintenance)) }

        // A deadlock guard, not a speed limit: 2-4 s in release, 145 s under the thread sanitizer's debug build.
        guard group.wait(timeout: .now() + 600) == .success else {
            Issue.record("the threads did not finish in 600 s (a deadlock?)")
            return
        }
        let results = outcomes.all
        #expect(results.count == Self.stressThreads)
        for failure in results.flatMap(\.failures) { Issue.record(Comment(rawValue: failure)) }
        let done = try #require(maintenance.result)
        for failure in done.failures { Issue.record(Comment(rawValue: failure)) }
        let read = try #require(readerFailures.result)
        for failure in read.failures { Issue.record(Comment(rawValue: failure)) }
        #expect(read.rounds > 0)
        #expect(done.rotations > 0 && done.compactions > 0 && done.batches > 0)

        var expected: [String: [UInt8]] = [:]
        for result in results { expected.merge(result.live) { first, _ in first } }
        let reopened = try Keychain.open(at: path, credential: TestKeychain.password)
        #expect(reopened.count == expected.count + done.liveBatchItems.count)
        let stress = try reopened.find(GenericPassword.self, matching: .genericPassword(service: StressThread.service))
        #expect(stress.count == expected.count)
        #expect(Dictionary(stress.map { ($0.account, $0.value ?? []) }, uniquingKeysWith: { first, _ in first }) == expected)
        let batchAccounts = try Self.batchAccounts(reopened)
        #expect(batchAccounts == done.liveBatchItems.sorted())
        // The second credential is there exactly when the maintenance thread last added it.
        let extraOpens: Bool
        do {
            _ = try Keychain.open(at: path, credential: .password(Self.extraPassword))
            extraOpens = true
        } catch {
            extraOpens = false
        }
        #expect(extraOpens == done.extraCredential)
        // Every object follows every rewrite: the old ones read the final state too.
        try maintainer.refresh()
        #expect(maintainer.count == reopened.count)
        #expect(try reader.statistics().epoch == reopened.statistics().epoch)
    }

    static let extraPassword = "the extra credential"

    /// What the maintenance (or the reader) thread did and found.
    struct MaintenanceResult: Sendable {
        var failures: [String] = []
        var liveBatchItems: [String] = []
        var extraCredential = false
        var rotations = 0
        var compactions = 0
        var batches = 0
        var rounds = 0
    }

    final class MaintenanceOutcome: @unchecked Sendable {
        // `@unchecked Sendable`: `stored` is only touched under `lock`.
        private let lock = NSLock()
        private var stored: MaintenanceResult?

        func finish(_ result: MaintenanceResult) {
            lock.lock()
            defer { lock.unlock() }
            stored = result
        }

        var result: MaintenanceResult? {
            lock.lock()
            defer { lock.unlock() }
            return stored
        }
    }

    /// Rounds of: a batch adding a group of items (and deleting an older group), then a compaction, a master
    /// key rotation (keeping the test password, with or without the extra one), or adding or removing the
    /// extra credential.
    static func maintain(_ keychain: Keychain) -> MaintenanceResult {
        var result = MaintenanceResult()
        var random = TestRandom(seed: 0x4D41_494E)
        var groups: [Int] = []
        let fast = PasswordIterations.insecureForTesting(1_000)
        for round in 0..<maintenanceRounds {
            do throws(KeychainError) {
                let retired = groups.count > 3 ? groups.removeFirst() : nil
                try keychain.batch { (batch) throws(KeychainError) in
                    for member in 0..<batchSize {
                        try batch.add(GenericPassword(service: batchService, account: "g\(round)-\(member)", password: "x"))
                    }
                    if let retired {
                        for member in 0..<batchSize {
                            try batch.delete(.genericPassword(service: batchService, account: "g\(retired)-\(member)"))
                        }
                    }
                }
                groups.append(round)
                result.batches += 1
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    try keychain.compact()
                    result.compactions += 1
                case 1:
                    let extra = Bool.random(using: &random)
                    try keychain.rotateMasterKey(
                        credentials: [TestKeychain.password] + (extra ? [.password(extraPassword)] : []), iterations: fast)
                    result.extraCredential = extra
                    result.rotations += 1
                case 2 where !result.extraCredential:
                    try keychain.addCredential(.password(extraPassword), iterations: fast)
                    result.extraCredential = true
                case 2:
                    try keychain.removeCredential(.password(extraPassword))
                    result.extraCredential = false
                default:
                    break
                }
            } catch {
                result.failures.append("maintenance round \(round): \(error)")
            }
            usleep(2_000)
        }
        result.liveBatchItems = groups.flatMap { group in (0..<batchSize).map { "g\(group)-\($0)" } }
        return result
    }

    /// Lists the batch items until the maintenance thread is done: every group must be whole.
    static func readBatches(_ keychain: Keychain, until maintenance: MaintenanceOutcome) -> MaintenanceResult {
        var result = MaintenanceResult()
        while maintenance.result == nil {
            do throws(KeychainError) {
                let accounts = try batchAccounts(keychain)
                var members: [Substring: Int] = [:]
                for account in accounts { members[account.split(separator: "-")[0], default: 0] += 1 }
                for (group, count) in members where count != batchSize {
                    result.failures.append("group \(group) seen with \(count) of \(batchSize) items")
                }
                result.rounds += 1
            } catch {
                result.failures.append("reading the batch items: \(error)")
            }
        }
        return result
    }

    static func batchAccounts(_ keychain: Keychain) throws(KeychainError) -> [String] {
        do throws(KeychainError) {
            return try keychain.find(GenericPassword.self, matching: .genericPassword(service: batchService), loadingValues: false)
                .map(\.account).sorted()
        } catch {
            if case .itemNotFound = error { return [] }
            throw error
        }
    }
}
