import Foundation
import Testing
@testable import KeychainFile

/// `keychain.async` (``AsyncKeychain``): every call that reads or writes the file has an `async` form there,
/// with the same results and typed errors, running off the caller's actor.
@Suite("Async keychain")
struct AsyncKeychainTests {
    static let fast = PasswordIterations.insecureForTesting(1_000)

    @Test("Opening, passwords, data, Codable values and accounts do what the blocking calls do")
    func passwordsAndOpening() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("async.kcf")
        let keychain = try await AsyncKeychain.openOrCreate(
            at: path, credential: TestKeychain.password, creationOptions: TestKeychain.fastOptions)
        try await keychain.setPassword("s3cret", forService: "mail", account: "ann")
        #expect(try await keychain.password(forService: "mail", account: "ann") == "s3cret")
        try await keychain.setData([0xff, 0x00], forService: "mail", account: "raw")
        #expect(try await keychain.data(forService: "mail", account: "raw") == [0xff, 0x00])
        try await keychain.setValue(["scope": "read"], forService: "api", account: "me")
        #expect(try await keychain.value([String: String].self, forService: "api", account: "me") == ["scope": "read"])
        #expect(try await keychain.accounts(forService: "mail") == ["ann", "raw"])
        try await keychain.removePassword(forService: "mail", account: "raw")
        await #expect(throws: KeychainError.itemNotFound) { try await keychain.removePassword(forService: "mail", account: "raw") }
        await #expect(throws: KeychainError.itemNotFound) { try await keychain.password(forService: "mail", account: "raw") }

        let reopened = try await AsyncKeychain.open(at: path, credential: TestKeychain.password)
        #expect(try await reopened.password(forService: "mail", account: "ann") == "s3cret")
        let again = try await AsyncKeychain.openOrCreate(at: path, credential: TestKeychain.password)
        #expect(again.keychain.count == 2)
        let created = try await AsyncKeychain.create(
            at: directory.file("new.kcf"), credential: TestKeychain.password, options: TestKeychain.fastOptions)
        #expect(created.keychain.count == 0)
        await #expect(throws: KeychainError.wrongCredentials) { try await AsyncKeychain.open(at: path, credential: .password("wrong")) }
        await #expect(throws: KeychainError.invalidParameter("")) {
            try await AsyncKeychain.create(at: path, credential: TestKeychain.password, options: TestKeychain.fastOptions)
        }
    }

    @Test("Items, queries, identities and batches do what the blocking calls do")
    func items() async throws {
        let keychain = try Keychain.inMemory().async
        let bob = try await keychain.add(GenericPassword(service: "mail", account: "bob", password: "b"))
        #expect(try await keychain.secret(for: bob) == Array("b".utf8))
        try await keychain.add(try GenericPassword(service: "mail", account: "ann", password: "a").attributes, secret: Array("a".utf8))
        try await keychain.batch { (batch) throws(KeychainError) in
            try batch.add(GenericPassword(service: "mail", account: "cy", password: "c"))
            try batch.delete(.genericPassword(service: "mail", account: "bob"))
        }
        let untyped = try await keychain.batch { batch in
            try batch.add(GenericPassword(service: "mail", account: "dee", password: "d"))
        }
        #expect(try await keychain.secret(for: untyped) == Array("d".utf8))
        struct Stop: Error {}
        await #expect(throws: Stop.self) {
            try await keychain.batch { batch in
                try batch.add(GenericPassword(service: "mail", account: "never", password: "n"))
                throw Stop()
            }
        }
        let found = try await keychain.find(GenericPassword.self, matching: .genericPassword(service: "mail"))
        #expect(found.map(\.account) == ["ann", "cy", "dee"])
        #expect(try await keychain.update(.genericPassword(service: "mail", account: "cy"), setting: [:], secret: Array("c2".utf8)) == 1)
        #expect(try await keychain.search(.genericPassword(service: "mail", account: "cy"), returning: .data)[0].value == Array("c2".utf8))

        let certificate = try Certificate(der: try ExampleValues.certificateDER())
        var key = Key(keyClass: .privateKey)
        key.value = [UInt8](repeating: 0x42, count: 32)
        key.keyType = .ellipticCurve
        key.keySizeInBits = 256
        let identity = try Identity(certificate: certificate, privateKey: key)
        let references = try await keychain.add(identity)
        #expect(try await keychain.secret(for: references.privateKey) == key.value)
        #expect(try await keychain.findIdentities().map(\.certificate.value) == [certificate.value])

        #expect(try await keychain.delete(.genericPassword(service: "mail")) == 3)
        await #expect(throws: KeychainError.itemNotFound) { try await keychain.search(.genericPassword(service: "mail")) }
        await #expect(throws: KeychainError.itemNotFound) { try await keychain.delete(.genericPassword(service: "mail")) }
        await #expect(throws: KeychainError.duplicateItem) { try await keychain.add(identity) }
    }

    @Test("Statistics, compaction, credentials, salvage and repair do what the blocking calls do")
    func maintenance() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("async.kcf")
        let keychain = try await AsyncKeychain.create(at: path, credential: TestKeychain.password, options: TestKeychain.fastOptions)
        try await keychain.setPassword("1", forService: "s", account: "a")
        try await keychain.setPassword("2", forService: "s", account: "a")
        #expect(try await keychain.statistics().deadBytes > 0)
        #expect(try await keychain.compact().after.epoch == 2)
        let reports = OperationProgressTests.Reports()
        #expect(try await keychain.compact { reports.append($0) }.after.epoch == 3)
        #expect(reports.all == [OperationProgress(completed: 1, total: 1)], "the compaction's one item, reported")
        try await keychain.refresh()
        #expect(try await keychain.upgradeFormat() == false, "a new file is version 2 already")
        let older = try await AsyncKeychain.create(
            at: directory.file("v1.kcf"), credential: TestKeychain.password, options: TestKeychain.options(formatVersion: 1))
        #expect(try await older.upgradeFormat())
        let header = Array(try Data(contentsOf: URL(fileURLWithPath: directory.file("v1.kcf"))).prefix(10))
        #expect(header[8] == 0 && header[9] == 2, "bytes 8–9 are the format version")

        let recovery = Credential.key(SymmetricKey(size: .bits256))
        let slot = try await keychain.addCredential(.password("second"), iterations: Self.fast)
        try await keychain.addCredential(recovery)
        #expect(try await keychain.keySlots().count == 3)
        try await keychain.removeKeySlot(id: slot.id)
        try await keychain.removeCredential(recovery)
        #expect(try await keychain.keySlots().count == 1)
        try await keychain.changeCredential(from: TestKeychain.password, to: .password("third"), iterations: Self.fast)
        try await keychain.changePassword(from: "third", to: "fourth", iterations: Self.fast)
        #expect(try await AsyncKeychain.open(at: path, credential: .password("fourth")).keychain.count == 1)
        try await keychain.rotateMasterKey(credentials: [.password("fifth")], iterations: Self.fast)
        await #expect(throws: KeychainError.wrongCredentials) { try await AsyncKeychain.open(at: path, credential: .password("fourth")) }

        let report = try await AsyncKeychain.salvage(from: path, credential: .password("fifth"), to: directory.file("copy.kcf"))
        #expect(report.itemCount == 1 && report.damage == nil)
        let repaired = try await AsyncKeychain.repair(at: path, credential: .password("fifth"), keepingCopyAt: directory.file("backup.kcf"))
        #expect(repaired.itemCount == 1)
        let copy = try await AsyncKeychain.open(at: directory.file("copy.kcf"), credential: .password("fifth"))
        #expect(try await copy.password(forService: "s", account: "a") == "2")
    }

    @Test("The IfPresent reads and removals and the subscript have async forms: nil and false for missing items")
    func ifPresent() async throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory).async
        #expect(try await keychain.passwordIfPresent(forService: "mail", account: "ann") == nil)
        #expect(try await keychain[service: "mail", account: "ann"] == nil)
        #expect(try await keychain.valueIfPresent([String].self, forService: "mail", account: "ann") == nil)
        #expect(try await keychain.removePasswordIfPresent(forService: "mail", account: "ann") == false)
        #expect(try await keychain.deleteIfPresent(.genericPassword(service: "mail")) == 0)
        try await keychain.setPassword("s3cret", forService: "mail", account: "ann")
        try await keychain.setValue(["a"], forService: "list", account: "ann")
        #expect(try await keychain[service: "mail", account: "ann"] == "s3cret")
        #expect(try await keychain.valueIfPresent([String].self, forService: "list", account: "ann") == ["a"])
        #expect(try await keychain.removePasswordIfPresent(forService: "mail", account: "ann") == true)
        #expect(try await keychain.deleteIfPresent(.genericPassword(service: "list")) == 1)
        let other = try await AsyncKeychain.open(at: keychain.keychain.path, credential: TestKeychain.password)
        try await other.rotateMasterKey(credentials: [.password("another")], iterations: Self.fast)
        await #expect(throws: KeychainError.wrongCredentials) { try await keychain.passwordIfPresent(forService: "mail", account: "ann") }
    }

    @Test("Errors arrive typed: a `do throws(KeychainError)` catches them by case")
    func typedErrors() async throws {
        let keychain = try Keychain.inMemory().async
        do throws(KeychainError) {
            _ = try await keychain.password(forService: "nobody", account: "here")
            Issue.record("a missing password was read")
        } catch .itemNotFound {
            // expected
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("The blocking work runs off the caller's actor: a batch body called from an actor does not run on its executor")
    func runsOffTheCallersActor() async throws {
        let executor = ThreadExecutor()
        defer { executor.stop() }
        let caller = Caller(executor: executor)
        let keychain = try Keychain.inMemory().async
        let places = try await caller.addReportingWhereTheBodyRan(to: keychain)
        #expect(places.callerOnItsExecutor, "the actor did not run on its own executor: this test cannot tell")
        #expect(!places.bodyOnCallersExecutor, "the batch body ran on the calling actor's executor, keeping the actor busy")
        #expect(try await keychain.password(forService: "s", account: "a") == "x")
    }

    @Test("The first async overloads, now deprecated, still do what the blocking calls do")
    func deprecatedOverloads() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("deprecated.kcf")
        _ = try TestKeychain.create(in: directory, name: "deprecated.kcf")
        try await (DeprecatedAsyncOverloads() as any AsyncExercise).run(path: path)
    }
}

/// An actor on an executor of its own (one thread), so that a test can tell whether code ran on it.
actor Caller {
    let executor: ThreadExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(executor: ThreadExecutor) { self.executor = executor }

    /// Adds an item in a batch; returns whether this actor ran on its executor's thread, and whether the
    /// batch body did.
    func addReportingWhereTheBodyRan(to keychain: AsyncKeychain) async throws -> (callerOnItsExecutor: Bool, bodyOnCallersExecutor: Bool) {
        let callerOnItsExecutor = ThreadExecutor.isCurrentThreadAnExecutor
        let bodyOnCallersExecutor = try await keychain.batch { (batch) throws(KeychainError) -> Bool in
            try batch.add(GenericPassword(service: "s", account: "a", password: "x"))
            return ThreadExecutor.isCurrentThreadAnExecutor
        }
        return (callerOnItsExecutor, bodyOnCallersExecutor)
    }
}

/// A serial executor that runs its jobs on one thread of its own, outside Swift's global executor.
final class ThreadExecutor: SerialExecutor, @unchecked Sendable {
    // `@unchecked Sendable`: `jobs` and `stopped` are read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false
    private static let marker = "AsyncKeychainTests.ThreadExecutor"

    /// Whether the current thread is a `ThreadExecutor`'s.
    static var isCurrentThreadAnExecutor: Bool { Thread.current.threadDictionary[marker] != nil }

    init() {
        let thread = Thread { [self] in
            Thread.current.threadDictionary[Self.marker] = true
            run()
        }
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            condition.signal()
        }
    }

    /// Ends the thread once the jobs enqueued so far have run.
    func stop() {
        condition.withLock {
            stopped = true
            condition.signal()
        }
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedSerialExecutor())
        }
    }
}

/// Calls the deprecated overloads from a deprecated method, reached through a protocol so that calling it is
/// not itself a use of a deprecated declaration: the test builds without warnings.
protocol AsyncExercise {
    func run(path: String) async throws
}

struct DeprecatedAsyncOverloads: AsyncExercise {
    @available(*, deprecated, message: "exercises the deprecated async overloads of Keychain")
    func run(path: String) async throws {
        let keychain = try await Keychain.open(at: path, credential: TestKeychain.password)
        try await keychain.setPassword("s3cret", forService: "mail", account: "ann")
        #expect(try await keychain.password(forService: "mail", account: "ann") == "s3cret")
        try await keychain.add(GenericPassword(service: "mail", account: "bob", password: "b"))
        try await keychain.batch { (batch) throws(KeychainError) in
            try batch.add(GenericPassword(service: "mail", account: "cy", password: "c"))
            try batch.delete(.genericPassword(service: "mail", account: "bob"))
        }
        let found = try await keychain.find(GenericPassword.self, matching: .genericPassword(service: "mail"))
        #expect(found.map(\.account) == ["ann", "cy"])
        #expect(try await keychain.update(.genericPassword(service: "mail", account: "cy"), setting: [:], secret: Array("c2".utf8)) == 1)
        #expect(try await keychain.compact().after.epoch == 2)
        #expect(try await keychain.delete(.genericPassword(service: "mail")) == 2)
        await #expect(throws: KeychainError.itemNotFound) { try await keychain.search(.genericPassword(service: "mail")) }
        await #expect(throws: KeychainError.wrongCredentials) { try await Keychain.open(at: path, credential: .password("wrong")) }
    }
}
