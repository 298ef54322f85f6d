import Foundation
import Testing
@testable import KeychainFile

/// Many threads on one `Keychain` object: adds, finds, updates, deletes, statistics and compactions at once.
///
/// Each thread owns the accounts "tN-…", so it knows exactly what its own items must hold at every step
/// while the other threads change theirs; run under `swift test --sanitize=thread` as well.
@Suite("Many threads on one Keychain object")
struct ThreadStressTests {
    static let threadCount = 8
    static let operationsPerThread = 300

    @Test("8 threads × 300 mixed operations on one keychain: each thread's items exact, also after reopening")
    func mixedOperations() throws {
        let directory = TemporaryDirectory()
        var options = TestKeychain.fastOptions
        // Small enough that commits also compact on their own, beside the explicit compactions.
        options.autoCompaction = AutoCompaction(deadShare: 0.3, minimumFileSize: 64 << 10)
        let path = directory.file("stress.kcf")
        let keychain = try Keychain.create(at: path, credential: TestKeychain.password, options: options)

        let outcomes = StressOutcomes()
        let group = DispatchGroup()
        for thread in 0..<Self.threadCount {
            group.enter()
            let worker = Thread {
                var stress = StressThread(number: thread, keychain: keychain)
                outcomes.record(stress.run(operations: Self.operationsPerThread))
                group.leave()
            }
            worker.stackSize = 1 << 20
            worker.start()
        }
        guard group.wait(timeout: .now() + 120) == .success else {
            Issue.record("the threads did not finish in 120 s (a deadlock?)")
            return
        }

        let results = outcomes.all
        #expect(results.count == Self.threadCount)
        for failure in results.flatMap(\.failures) { Issue.record(Comment(rawValue: failure)) }
        var expected: [String: [UInt8]] = [:]
        for result in results { expected.merge(result.live) { first, _ in first } }
        let compactions = results.reduce(0) { $0 + $1.compactions }
        #expect(compactions > 0)
        #expect(results.reduce(0) { $0 + $1.deletes } > 0)

        #expect(keychain.count == expected.count)
        #expect(try contents(of: keychain) == expected)
        let statistics = try keychain.statistics()
        #expect(statistics.itemCount == expected.count)
        #expect(statistics.epoch >= UInt64(1 + compactions))

        let reopened = try Keychain.open(at: path, credential: TestKeychain.password)
        #expect(reopened.count == expected.count)
        #expect(try contents(of: reopened) == expected)
        #expect(try reopened.statistics().epoch == statistics.epoch)
    }

    /// Every generic password of the stress service: account → secret. Fails if an account is there twice.
    private func contents(of keychain: Keychain) throws -> [String: [UInt8]] {
        guard keychain.count > 0 else { return [:] }
        let items = try keychain.find(GenericPassword.self, matching: .genericPassword(service: StressThread.service))
        var contents: [String: [UInt8]] = [:]
        for item in items {
            #expect(contents[item.account] == nil, "\(item.account) is in the keychain twice")
            contents[item.account] = item.value ?? []
        }
        return contents
    }
}

/// What one stress thread left: its live items (account → secret), what went wrong, what it did.
struct StressResult: Sendable {
    var live: [String: [UInt8]] = [:]
    var failures: [String] = []
    var compactions = 0
    var deletes = 0
}

/// The results of all threads, collected under a lock.
final class StressOutcomes: @unchecked Sendable {
    // `@unchecked Sendable`: `results` is only touched under `lock`.
    private let lock = NSLock()
    private var results: [StressResult] = []

    func record(_ result: StressResult) {
        lock.lock()
        defer { lock.unlock() }
        results.append(result)
    }

    var all: [StressResult] {
        lock.lock()
        defer { lock.unlock() }
        return results
    }
}

/// One thread's operations: a seeded random mix over its own accounts "tN-i", checking every answer
/// against what it wrote, plus reads of the other threads' items and of the whole keychain.
struct StressThread {
    static let service = "stress"

    let number: Int
    let keychain: Keychain
    private var random: TestRandom
    private var result = StressResult()
    private var nextIndex = 0
    /// Accounts this thread added and then deleted.
    private var deleted: [String] = []

    init(number: Int, keychain: Keychain) {
        self.number = number
        self.keychain = keychain
        random = TestRandom(seed: 0x5EED_0000 + UInt64(number))
    }

    mutating func run(operations: Int) -> StressResult {
        for step in 0..<operations {
            do {
                try perform(step: step)
            } catch {
                result.failures.append("thread \(number), step \(step): unexpected \(error)")
            }
        }
        return result
    }

    private func query(_ account: String) -> Query { .genericPassword(service: Self.service, account: account) }

    private mutating func fail(_ step: Int, _ text: String) {
        result.failures.append("thread \(number), step \(step): \(text)")
    }

    private mutating func perform(step: Int) throws(KeychainError) {
        let roll = Int.random(in: 0..<100, using: &random)
        guard roll >= 30, let account = result.live.keys.sorted().randomElement(using: &random) else {
            let new = "t\(number)-\(nextIndex)"
            nextIndex += 1
            let secret = Array("\(new) step \(step)".utf8)
            try keychain.add(GenericPassword(service: Self.service, account: new, value: secret))
            result.live[new] = secret
            return
        }
        switch roll {
        case 30..<33:
            do {
                try keychain.add(GenericPassword(service: Self.service, account: account, password: "again"))
                fail(step, "adding \(account) again did not throw duplicateItem")
            } catch .duplicateItem {}
        case 33..<50:
            let found = try keychain.find(GenericPassword.self, matching: query(account))
            if found.map(\.value) != [result.live[account]] { fail(step, "\(account) holds \(found.map(\.value))") }
        case 50..<55:
            guard let gone = deleted.randomElement(using: &random) else { return }
            do {
                let found = try keychain.find(GenericPassword.self, matching: query(gone))
                fail(step, "deleted \(gone) was found: \(found)")
            } catch .itemNotFound {}
        case 55..<70:
            let secret = Array("\(account) updated at step \(step)".utf8)
            let changed = try keychain.update(query(account), setting: [:], secret: secret)
            if changed != 1 { fail(step, "updating \(account) changed \(changed) items") }
            result.live[account] = secret
        case 70..<80:
            let removed = try keychain.delete(query(account))
            if removed != 1 { fail(step, "deleting \(account) removed \(removed) items") }
            result.live[account] = nil
            deleted.append(account)
            result.deletes += 1
        case 80..<88:
            // Another thread's item: there or not, but nothing else may go wrong.
            let other = "t\(Int.random(in: 0..<ThreadStressTests.threadCount, using: &random))-\(Int.random(in: 0..<40, using: &random))"
            do { _ = try keychain.find(GenericPassword.self, matching: query(other)) } catch .itemNotFound {}
        case 88..<93:
            // A listing of everything: no account twice, and every item of this thread as it left it.
            let all = try keychain.find(GenericPassword.self, matching: .genericPassword(service: Self.service))
            let accounts = all.map(\.account)
            if Set(accounts).count != accounts.count { fail(step, "a listing holds an account twice") }
            let listed = Dictionary(all.map { ($0.account, $0.value) }, uniquingKeysWith: { first, _ in first })
            for (own, secret) in result.live where listed[own] != secret { fail(step, "the listing misses or garbles \(own)") }
            for gone in deleted where listed[gone] != nil { fail(step, "the listing holds deleted \(gone)") }
        case 93..<98:
            let statistics = try keychain.statistics()
            if statistics.itemCount < result.live.count || statistics.liveBytes > statistics.fileSize {
                fail(step, "implausible statistics with \(result.live.count) items of this thread: \(statistics)")
            }
        default:
            try keychain.compact()
            result.compactions += 1
        }
    }
}
