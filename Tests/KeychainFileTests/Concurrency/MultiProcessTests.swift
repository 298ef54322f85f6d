import Foundation
import Testing
@testable import KeychainFile

/// Several processes on one keychain file (SPEC.md §16): `kcf-worker` children (WorkerProcess.swift) add,
/// update, read and compact while the test process holds the file open too.
@Suite("Several processes on one keychain file", .serialized)
struct MultiProcessTests {
    static let credential = Credential.password(WorkerProcess.password)

    /// A new keychain that the workers' password opens; the object is closed before this returns.
    private func createKeychain(in directory: TemporaryDirectory, seeding seedCount: Int = 0) throws -> String {
        let path = directory.file("shared.kcf")
        let keychain = try Keychain.create(at: path, credential: Self.credential, options: TestKeychain.fastOptions)
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<seedCount {
                let account = "seed-\(index)"
                try batch.add(GenericPassword(service: "worker", account: account, value: secret(of: account)))
            }
        }
        return path
    }

    /// Every worker item of the file at `path`, read by a fresh open, with its secret.
    private func storedItems(at path: String) throws -> [GenericPassword] {
        try Keychain.open(at: path, credential: Self.credential)
            .find(GenericPassword.self, matching: .genericPassword(service: "worker"))
    }

    @Test("Four processes adding 200 items each at once: every item is in the file exactly once")
    func concurrentAdds() throws {
        let directory = TemporaryDirectory()
        let path = try createKeychain(in: directory)
        let prefixes = (0..<4).map { "adder\($0)" }
        let workers = try prefixes.map { try WorkerProcess(["add", path, $0, "200"], in: directory) }
        var acknowledged: [String] = []
        for (prefix, worker) in zip(prefixes, workers) {
            let lines = worker.expectSuccess()
            #expect(lines == (0..<200).map { "ok \(prefix)-\($0)" })
            acknowledged += lines.compactMap { $0.hasPrefix("ok ") ? String($0.dropFirst(3)) : nil }
        }

        let keychain = try Keychain.open(at: path, credential: Self.credential)
        #expect(keychain.count == 800)
        let items = try keychain.find(GenericPassword.self, matching: .genericPassword(service: "worker"))
        let accounts = items.map(\.account)
        #expect(accounts.count == 800)
        #expect(Set(accounts).count == accounts.count, "an item is in the file twice")
        #expect(Set(accounts) == Set(prefixes.flatMap { prefix in (0..<200).map { "\(prefix)-\($0)" } }))
        #expect(Set(acknowledged).subtracting(accounts).isEmpty, "acknowledged adds are missing")
        for item in items where item.value != secret(of: item.account) {
            Issue.record("\(item.account) has a wrong secret")
        }
        // The adds really interleaved: the file's order switches between workers (items come back in the
        // order they were added).
        let switches = zip(accounts, accounts.dropFirst()).filter { prefix(of: $0) != prefix(of: $1) }.count
        #expect(switches >= 3)
    }

    @Test("One process compacts in a loop while others add, update and read: nothing is lost")
    func compactionWhileWriting() throws {
        let directory = TemporaryDirectory()
        let path = try createKeychain(in: directory, seeding: 50)
        let compactions = 40
        let compactor = try WorkerProcess(["compact-loop", path, "\(compactions)"], in: directory)
        let adders = try (0..<2).map { try WorkerProcess(["add", path, "adder\($0)", "150"], in: directory) }
        let updater = try WorkerProcess(["update-loop", path, "seed", "150"], in: directory)
        // Each reader reads until it has seen two epochs, however quick its 300 reads are.
        let readers = try (0..<2).map { _ in try WorkerProcess(["read-loop", path, "300", "2"], in: directory) }

        let compacted = compactor.expectSuccess()
        var acknowledged: [String] = []
        for worker in adders {
            acknowledged += worker.expectSuccess().compactMap { $0.hasPrefix("ok ") ? String($0.dropFirst(3)) : nil }
        }
        let updates = updater.expectSuccess()
        let readerLines = readers.map { $0.expectSuccess() }

        #expect(compacted.count == compactions)
        #expect(acknowledged.count == 300)
        #expect(updates.count == 150)
        for lines in readerLines { #expect(lines.last == "reads 300") }

        let items = try storedItems(at: path)
        let byAccount = Dictionary(items.map { ($0.account, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(items.count == 350)
        #expect(byAccount.count == items.count, "an item is in the file twice")
        for account in acknowledged {
            #expect(byAccount[account]?.value == secret(of: account), "\(account) was acknowledged but is missing or wrong")
        }
        // The last acknowledged update of each seed item is its secret now.
        var lastVersion: [String: Int] = [:]
        for line in updates {
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[0] == "updated", let version = Int(fields[2]) else {
                Issue.record("unexpected update-loop output: \(line)")
                continue
            }
            lastVersion[String(fields[1])] = version
        }
        for index in 0..<50 {
            let account = "seed-\(index)"
            let expected = lastVersion[account].map { Array("secret-\(account)-v\($0)".utf8) } ?? secret(of: account)
            #expect(byAccount[account]?.value == expected, "\(account) does not hold its last acknowledged secret")
        }

        let statistics = try Keychain.open(at: path, credential: Self.credential).statistics()
        #expect(statistics.epoch >= UInt64(1 + compactions))
        // Every compaction renamed its temporary file over the keychain; none is left beside it.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty)
        // The compactions overlapped the adds: they did not all see the same number of items.
        let compactedCounts = Set(compacted.compactMap { $0.split(separator: " ").last.flatMap { Int($0) } })
        #expect(compactedCounts.count > 1, "every compaction saw the same items: \(compacted)")
        // Each reader followed the file across at least one compaction without reopening it.
        for lines in readerLines {
            #expect(lines.filter { $0.hasPrefix("epoch ") }.count > 1, "a reader saw one epoch only: \(lines)")
        }
    }

    @Test("Three processes adding and deleting, one compacting, one rotating the master key, two scanning: counts exact")
    func churnWithCompactionAndRotation() throws {
        let directory = TemporaryDirectory()
        let path = try createKeychain(in: directory, seeding: 30)
        let writers = try (0..<3).map { try WorkerProcess(["churn", path, "churn\($0)", "120"], in: directory) }
        let compactor = try WorkerProcess(["compact-loop", path, "25"], in: directory)
        let rotator = try WorkerProcess(["rotate-loop", path, "8"], in: directory)
        // The scanners list the items until the others are done and the stop file appears.
        let stopFile = directory.file("stop")
        let scanners = try (0..<2).map { _ in try WorkerProcess(["scan-loop", path, stopFile], in: directory) }

        var expected = Set((0..<30).map { "seed-\($0)" })
        var added = 0
        var deleted = 0
        for worker in writers {
            for line in worker.expectSuccess(timeout: 120) {
                let fields = line.split(separator: " ").map(String.init)
                switch (fields.first, fields.count) {
                case ("added", 2):
                    #expect(expected.insert(fields[1]).inserted, "\(fields[1]) added twice")
                    added += 1
                case ("deleted", 2):
                    #expect(expected.remove(fields[1]) != nil, "\(fields[1]) deleted but never added")
                    deleted += 1
                default:
                    Issue.record("unexpected churn output: \(line)")
                }
            }
        }
        #expect(compactor.expectSuccess(timeout: 120).count == 25)
        #expect(rotator.expectSuccess(timeout: 120) == (0..<8).map { "rotated \($0)" })
        _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
        let scans = scanners.map { $0.expectSuccess(timeout: 120) }
        for lines in scans { #expect(lines.last?.hasPrefix("scans ") == true) }
        #expect(added == 360)
        #expect(deleted == 3 * 40)

        // Exact: the seed items plus every acknowledged add minus every acknowledged delete, each once, with its
        // own secret; no other item.
        let keychain = try Keychain.open(at: path, credential: Self.credential)
        #expect(keychain.count == 30 + added - deleted)
        let items = try storedItems(at: path)
        #expect(items.count == expected.count)
        #expect(Set(items.map(\.account)) == expected)
        for item in items where item.value != secret(of: item.account) { Issue.record("\(item.account) has a wrong secret") }
        // The last rotation's second password opens the file too; an earlier one does not.
        #expect(try Keychain.open(at: path, credential: .password("rotation-7")).count == expected.count)
        #expect(throws: KeychainError.wrongCredentials) { try Keychain.open(at: path, credential: .password("rotation-6")) }
        #expect(try keychain.statistics().epoch >= 1 + 25 + 8)
        // The scanners followed the rewrites without reopening.
        for lines in scans { #expect(lines.filter { $0.hasPrefix("epoch ") }.count > 1, "a scanner saw one epoch only") }
    }

    @Test("An open keychain sees another process's adds on its next call, and follows it across a compaction")
    func seesOtherProcessWrites() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("shared.kcf")
        let keychain = try Keychain.create(at: path, credential: Self.credential, options: TestKeychain.fastOptions)
        try keychain.add(GenericPassword(service: "worker", account: "mine-0", value: secret(of: "mine-0")))

        try WorkerProcess.run(["add", path, "first", "20"], in: directory)
        #expect(try keychain.find(GenericPassword.self, matching: .genericPassword(service: "worker", account: "first-19"))
            .map(\.value) == [secret(of: "first-19")])
        #expect(keychain.count == 21)

        let fileBefore = try fileNumber(path)
        #expect(try WorkerProcess.run(["compact-loop", path, "1"], in: directory) == ["compacted epoch 2 items 21"])
        #expect(try fileNumber(path) != fileBefore, "the compaction did not replace the file")
        // The old object reloads the replaced file on its next call: reads, then writes, then reads others' adds.
        #expect(try keychain.find(GenericPassword.self, matching: .genericPassword(service: "worker", account: "first-0"))
            .map(\.value) == [secret(of: "first-0")])
        #expect(try keychain.statistics().epoch == 2)
        try keychain.add(GenericPassword(service: "worker", account: "mine-1", value: secret(of: "mine-1")))
        try WorkerProcess.run(["add", path, "second", "10"], in: directory)
        try keychain.refresh()
        #expect(keychain.count == 32)
        #expect(try keychain.find(GenericPassword.self, matching: .genericPassword(service: "worker", account: "second-9"))
            .map(\.value) == [secret(of: "second-9")])

        // The same again when the test's own object is the one that compacts: a worker opened afterwards reads
        // everything, and the test object sees the worker's add into the new file.
        try keychain.compact()
        try WorkerProcess.run(["add", path, "third", "1"], in: directory)
        #expect(try keychain.find(GenericPassword.self, matching: .genericPassword(service: "worker", account: "third-0"))
            .map(\.value) == [secret(of: "third-0")])

        let items = try storedItems(at: path)
        #expect(items.count == 33)
        #expect(Set(items.map(\.account)).count == 33)
        for item in items where item.value != secret(of: item.account) {
            Issue.record("\(item.account) has a wrong secret")
        }
        #expect(try Keychain.open(at: path, credential: Self.credential).statistics().epoch == 3)
    }

    @Test("A worker given no password or a bad command fails with its usage status, and a wrong password with 2")
    func workerFailures() throws {
        let directory = TemporaryDirectory()
        let path = try createKeychain(in: directory)
        #expect(try WorkerProcess(["add", path, "x", "1"], in: directory, password: nil).wait(timeout: 30) == 1)
        #expect(try WorkerProcess(["add", path, "x"], in: directory).wait(timeout: 30) == 1)
        #expect(try WorkerProcess(["read-loop", path, "many"], in: directory).wait(timeout: 30) == 1)
        // A keychain made with another password: the worker cannot open it.
        let other = directory.file("other.kcf")
        _ = try Keychain.create(at: other, credential: .password("another password"), options: TestKeychain.fastOptions)
        let failing = try WorkerProcess(["add", other, "x", "1"], in: directory)
        #expect(failing.wait(timeout: 30) == 2)
        #expect(failing.errorText.contains("keychain error"))
        #expect(failing.outputLines.isEmpty)
        // None of the failed workers changed the file.
        #expect(try Keychain.open(at: path, credential: Self.credential).count == 0)
    }
}

/// The secret kcf-worker's `add` gives an account.
private func secret(of account: String) -> [UInt8] { Array("secret-\(account)".utf8) }

/// "adder2" for "adder2-17".
private func prefix(of account: String) -> Substring { account.prefix { $0 != "-" } }

/// The inode number of the file at `path`.
private func fileNumber(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.systemFileNumber] as? NSNumber)?.intValue ?? -1
}
