import Foundation
import Testing
@testable import KeychainFile

/// Every path to one file is one file (SPEC.md §16): a keychain opened through a symbolic link uses its final
/// target's lock file, temporary files and rename, and a file with more than one name (hard links) is read,
/// never written.
@Suite("Paths: symbolic links are followed to one lock file; hard-linked files are read-only")
struct KeychainPathTests {
    /// Whatever the second writer's thread saw, read after it finished.
    private final class Outcome: @unchecked Sendable {
        // `@unchecked Sendable`: `error` is written by one thread before `done` is signalled, and read after.
        var error: (any Error)? = nil
        let done = DispatchSemaphore(value: 0)
    }

    /// Starts an add through `second` while a batch of `first` holds the lock file, and waits up to half a second
    /// for it inside the batch. Returns whether the add finished while the batch still held the lock file (it must
    /// not: the two keychains name one file), after checking that both adds are in the file at `path`.
    private static func addDuringBatch(
        first: Keychain, second: Keychain, accounts: (first: String, second: String), reopening path: String
    ) throws -> Bool {
        let outcome = Outcome()
        var finishedInside = false
        try first.batch { (batch) throws(KeychainError) in
            try batch.add(GenericPassword(service: "s", account: accounts.first, password: "1"))
            Thread {
                do {
                    try second.add(GenericPassword(service: "s", account: accounts.second, password: "2"))
                } catch {
                    outcome.error = error
                }
                outcome.done.signal()
            }.start()
            finishedInside = outcome.done.wait(timeout: .now() + 0.5) == .success
        }
        if !finishedInside { outcome.done.wait() }
        #expect(outcome.error == nil, "the second writer's add failed: \(String(describing: outcome.error))")
        let reopened = try Keychain.open(at: path, credential: TestKeychain.password)
        let stored = try reopened.find(GenericPassword.self, matching: .genericPassword(service: "s")).map(\.account)
        #expect(stored.contains(accounts.first) && stored.contains(accounts.second), "an acknowledged add was lost: \(stored)")
        return finishedInside
    }

    @Test("A writer through a symbolic link and one through its target take one lock file: the second waits, no add is lost")
    func symbolicLinkAndTargetSerialise() throws {
        let directory = TemporaryDirectory()
        let target = directory.file("real.kcf")
        _ = try Keychain.create(at: target, credential: TestKeychain.password, options: TestKeychain.fastOptions)
        let link = directory.file("link.kcf")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real.kcf")
        let throughLink = try Keychain.open(at: link, credential: TestKeychain.password)
        let throughTarget = try Keychain.open(at: target, credential: TestKeychain.password)
        #expect(try !Self.addDuringBatch(first: throughLink, second: throughTarget, accounts: ("a1", "a2"), reopening: target),
                "the writer through the target committed while the one through the link held the lock file")
        #expect(try !Self.addDuringBatch(first: throughTarget, second: throughLink, accounts: ("b1", "b2"), reopening: link),
                "the writer through the link committed while the one through the target held the lock file")
        #expect(!FileManager.default.fileExists(atPath: link + ".lock"), "a second lock file was made beside the link")
    }

    @Test("A chain of relative symbolic links leads to one lock file, beside the final target; path is the path given")
    func chainOfRelativeLinks() throws {
        let directory = TemporaryDirectory()
        for folder in ["data", "links"] {
            try FileManager.default.createDirectory(atPath: directory.file(folder), withIntermediateDirectories: false)
        }
        let target = directory.file("data/real.kcf")
        _ = try Keychain.create(at: target, credential: TestKeychain.password, options: TestKeychain.fastOptions)
        // top.kcf -> links/middle.kcf -> ../data/real.kcf
        try FileManager.default.createSymbolicLink(atPath: directory.file("links/middle.kcf"), withDestinationPath: "../data/real.kcf")
        try FileManager.default.createSymbolicLink(atPath: directory.file("top.kcf"), withDestinationPath: "links/middle.kcf")
        let keychain = try Keychain.open(at: directory.file("top.kcf"), credential: TestKeychain.password)
        try keychain.add(GenericPassword(service: "s", account: "a", password: "p"))
        #expect(keychain.path == directory.file("top.kcf"))
        #expect(!FileManager.default.fileExists(atPath: directory.file("top.kcf.lock")))
        #expect(!FileManager.default.fileExists(atPath: directory.file("links/middle.kcf.lock")))
        #expect(FileManager.default.fileExists(atPath: target + ".lock"))
        let viaTarget = try Keychain.open(at: target, credential: TestKeychain.password)
        #expect(try viaTarget.find(GenericPassword.self, matching: .genericPassword(service: "s")).map(\.account) == ["a"])
    }

    /// A rewrite through a link in another directory than its target.
    enum Rewrite: String, CaseIterable, CustomStringConvertible {
        case compact, changePassword, rotateMasterKey
        var description: String { rawValue }

        func run(on keychain: Keychain) throws(KeychainError) {
            switch self {
            case .compact: _ = try keychain.compact()
            case .changePassword:
                try keychain.changeCredential(from: TestKeychain.password, to: TestKeychain.password, iterations: .insecureForTesting(1_000))
            case .rotateMasterKey: try keychain.rotateMasterKey(credentials: [TestKeychain.password], iterations: .insecureForTesting(1_000))
            }
        }
    }

    @Test("A rewrite through a symbolic link replaces its target and keeps the link; both paths see the same items",
          arguments: Rewrite.allCases)
    func rewriteThroughLink(_ rewrite: Rewrite) throws {
        let directory = TemporaryDirectory()
        for folder in ["data", "links"] {
            try FileManager.default.createDirectory(atPath: directory.file(folder), withIntermediateDirectories: false)
        }
        let target = directory.file("data/real.kcf")
        let creator = try Keychain.create(at: target, credential: TestKeychain.password, options: TestKeychain.fastOptions)
        try creator.add(GenericPassword(service: "s", account: "before", password: "1"))
        let link = directory.file("links/link.kcf")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let keychain = try Keychain.open(at: link, credential: TestKeychain.password)
        try rewrite.run(on: keychain)
        try keychain.add(GenericPassword(service: "s", account: "after", password: "2"))

        let attributes = try FileManager.default.attributesOfItem(atPath: link)
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink, "\(rewrite) replaced the link with a file")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("links")) == ["link.kcf"],
                "\(rewrite) left files beside the link")
        #expect(try fileBytes(link) == (try fileBytes(target)))
        for path in [link, target] {
            let reopened = try Keychain.open(at: path, credential: TestKeychain.password)
            #expect(reopened.head.epoch == 2, "\(path)")
            #expect(try reopened.find(GenericPassword.self, matching: .genericPassword(service: "s")).map(\.account) == ["before", "after"])
        }
        // The keychain that opened the target before the rewrite follows it, as it follows any other process's.
        #expect(try creator.find(GenericPassword.self, matching: .genericPassword(service: "s")).count == 2)
    }

    @Test("create through a symbolic link to nothing is refused, naming the link's target; nothing is created")
    func createThroughDanglingLink() throws {
        let directory = TemporaryDirectory()
        let link = directory.file("link.kcf")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory.file("missing.kcf"))
        do {
            _ = try Keychain.create(at: link, credential: TestKeychain.password, options: TestKeychain.fastOptions)
            Issue.record("create through a dangling symbolic link succeeded")
        } catch {
            #expect(error == .invalidParameter(""))
            #expect("\(error)".contains(directory.file("missing.kcf")), "\(error)")
            #expect("\(error)".contains("symbolic link"), "\(error)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["link.kcf"])
    }

    @Test("A keychain file with two names (hard links) is read through either, and every write is refused naming the path and the link count")
    func hardLinkedFileIsReadOnly() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("k.kcf")
        let creator = try Keychain.create(at: path, credential: TestKeychain.password, options: TestKeychain.fastOptions)
        try creator.add(GenericPassword(service: "s", account: "a", password: "p"))
        let second = directory.file("second-name.kcf")
        try FileManager.default.linkItem(atPath: path, toPath: second)
        let before = try fileBytes(path)

        for name in [path, second] {
            let keychain = try Keychain.open(at: name, credential: TestKeychain.password)
            #expect(try keychain.find(GenericPassword.self, matching: .genericPassword(service: "s")).map(\.value) == [Array("p".utf8)])
            let writes: [(String, () throws(KeychainError) -> Void)] = [
                ("add", { () throws(KeychainError) in try keychain.add(GenericPassword(service: "s", account: "b", password: "q")) }),
                ("delete", { () throws(KeychainError) in _ = try keychain.delete(.genericPassword(service: "s")) }),
                ("compact", { () throws(KeychainError) in _ = try keychain.compact() }),
            ]
            for (label, write) in writes {
                do throws(KeychainError) {
                    try write()
                    Issue.record("\(label) through \(name) succeeded on a file with two names")
                } catch {
                    #expect(error.code == -61, "\(label): \(error)")
                    #expect("\(error)".contains(name), "\(label): \(error)")
                    #expect("\(error)".contains("2 names"), "\(label): \(error)")
                }
            }
        }
        // The keychain that was open before the second name appeared refuses too, and goes on once it is gone.
        do throws(KeychainError) {
            try creator.add(GenericPassword(service: "s", account: "c", password: "r"))
            Issue.record("an add through the first name succeeded after a second name appeared")
        } catch {
            #expect(error.code == -61, "\(error)")
        }
        #expect(try fileBytes(path) == before)
        try FileManager.default.removeItem(atPath: second)
        try creator.add(GenericPassword(service: "s", account: "c", password: "r"))
        #expect(try Keychain.open(at: path, credential: TestKeychain.password).count == 2)
    }

    @Test("Two processes, one adding through a symbolic link and one through its target: every acknowledged add is there")
    func processesThroughLinkAndTarget() throws {
        let directory = TemporaryDirectory()
        let target = directory.file("shared.kcf")
        _ = try Keychain.create(at: target, credential: .password(WorkerProcess.password), options: TestKeychain.fastOptions)
        let link = directory.file("link.kcf")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let workers = try [("viaLink", link), ("viaTarget", target)].map { prefix, path in
            (prefix, try WorkerProcess(["add", path, prefix, "400"], in: directory))
        }
        var acknowledged: [String] = []
        for (_, worker) in workers {
            acknowledged += worker.expectSuccess().compactMap { $0.hasPrefix("ok ") ? String($0.dropFirst(3)) : nil }
        }
        #expect(acknowledged.count == 800)
        let stored = try Keychain.open(at: target, credential: .password(WorkerProcess.password))
            .find(GenericPassword.self, matching: .genericPassword(service: "worker")).map(\.account)
        #expect(Set(acknowledged).subtracting(stored).sorted() == [], "acknowledged adds are missing")
        #expect(stored.count == 800)
    }
}
