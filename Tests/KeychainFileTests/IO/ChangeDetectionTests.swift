import Foundation
import Testing
@testable import KeychainFile

/// A read notices another process's changes from one stat of the path (SPEC.md §16): the file there and its
/// size. These tests make changes that leave the size exactly as it was — a compaction of an already compact
/// file renamed over the path, a directory swapped for a copy — so that only the file's identity reveals them.
@Suite("Change detection: a read notices another file at the path, even of the same size")
struct ChangeDetectionTests {
    /// Moves the directory holding a keychain away, puts a copy of the keychain (another inode, and a new lock
    /// file beside it) where it was, and commits one more item to the copy through a new handle. Nothing about
    /// the file or the lock file `reader` has open changes. Returns the reader.
    private static func swapDirectoryUnderReader(_ directory: TemporaryDirectory) throws -> Keychain {
        let folder = directory.file("live")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let path = folder + "/k.kcf"
        let first = try Keychain.create(at: path, credential: TestKeychain.password, options: TestKeychain.fastOptions)
        try first.add(GenericPassword(service: "s", account: "before", password: "p"))
        let reader = try Keychain.open(at: path, credential: TestKeychain.password)
        _ = try reader.search(Query.genericPassword(service: "s"))
        _ = try reader.search(Query.genericPassword(service: "s"))
        try FileManager.default.moveItem(atPath: folder, toPath: directory.file("moved"))
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: directory.file("moved") + "/k.kcf", toPath: path)
        let writer = try Keychain.open(at: path, credential: TestKeychain.password)
        try writer.add(GenericPassword(service: "s", account: "after", password: "p"))
        return reader
    }

    private static func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? -1
    }

    /// Opens a reader and a writer on one compact file, lets the reader read once, compacts
    /// through the writer and returns the reader's epoch after its next read.
    private static func epochSeenAfterSameSizeCompaction(extraLink: Bool) throws -> (seen: UInt64, written: UInt64) {
        let directory = TemporaryDirectory()
        let writer = try TestKeychain.create(in: directory)
        try writer.batch { (batch) throws(KeychainError) in
            for index in 0..<3 { try batch.add(GenericPassword(service: "s", account: "a\(index)", password: "p")) }
        }
        _ = try writer.compact()
        let secondName = directory.file("second-name.kcf")
        if extraLink { try FileManager.default.linkItem(atPath: writer.path, toPath: secondName) }
        let reader = try Keychain.open(at: writer.path, credential: TestKeychain.password)
        _ = try reader.search(Query.genericPassword(service: "s"))
        _ = try reader.search(Query.genericPassword(service: "s"))
        let sizeBefore = try fileSize(writer.path)
        if extraLink {
            // A rename over a file with two names would leave the second name on the old file: the writer refuses
            // (SPEC.md §16), and goes on once the second name is gone.
            #expect(throws: KeychainError.readOnly(path: "", reason: "")) { _ = try writer.compact() }
            try FileManager.default.removeItem(atPath: secondName)
        }
        _ = try writer.compact()
        // The precondition that makes this test about identity: same size, so the size alone says nothing.
        #expect(try fileSize(writer.path) == sizeBefore)
        _ = try reader.search(Query.genericPassword(service: "s"))
        return (reader.head.epoch, writer.head.epoch)
    }

    @Test("A same-size compacted file renamed over the path is noticed")
    func renameOverSingleLink() throws {
        let result = try Self.epochSeenAfterSameSizeCompaction(extraLink: false)
        #expect(result.written == 3)
        #expect(result.seen == result.written)
    }

    @Test("With a second hard link to the file the writer refuses to rename over it; once the link is gone, the rename is noticed")
    func renameOverHardLinkedFile() throws {
        let result = try Self.epochSeenAfterSameSizeCompaction(extraLink: true)
        #expect(result.written == 3)
        #expect(result.seen == result.written)
    }

    @Test("A directory above the file renamed and a copy put in its place is noticed once the path check is due, though the open file and lock file are unchanged")
    func directorySwap() throws {
        let directory = TemporaryDirectory()
        let reader = try Self.swapDirectoryUnderReader(directory)
        // The swap bypassed the reader's lock file, so its counter says nothing; the path is looked up again
        // within RecordLog.pathCheckInterval (10 ms) of the last look.
        Thread.sleep(forTimeInterval: 0.03)
        let found = try reader.search(Query.genericPassword(service: "s"))
        #expect(found.count == 2)
    }

    @Test("Within the interval a read trusts the unchanged counter; refresh() looks the path up at once")
    func directorySwapRefresh() throws {
        let directory = TemporaryDirectory()
        let reader = try Self.swapDirectoryUnderReader(directory)
        // However long the swap took, the interval has not run out: only the counter decides.
        reader.withLock { reader.log.pathCheckInterval = .max }
        #expect(try reader.search(Query.genericPassword(service: "s")).count == 1)
        try reader.refresh()
        #expect(try reader.search(Query.genericPassword(service: "s")).count == 2)
    }
}

/// The lock file's change counter (SPEC.md §16): the first eight bytes of `NAME.lock`, a little-endian u64 that
/// every holder of the exclusive lock increments before releasing it, so that a read can skip the `stat`.
@Suite("Change counter: reads skip the stat only while no process following §16 wrote")
struct ChangeCounterTests {
    /// The counter as another implementation would read it: the lock file's first eight bytes, little-endian.
    private static func counterOnDisk(_ keychainPath: String) throws -> UInt64 {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: keychainPath + ".lock")))
        try #require(bytes.count >= 8)
        return bytes[0..<8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    @Test("Every write, compaction and credential change adds one to the counter in the lock file")
    func writesIncrement() throws {
        let directory = TemporaryDirectory()
        let keychain = try TestKeychain.create(in: directory)
        let afterCreate = try Self.counterOnDisk(keychain.path)
        #expect(afterCreate >= 1)
        try keychain.add(GenericPassword(service: "s", account: "a", password: "p"))
        try keychain.add(GenericPassword(service: "s", account: "b", password: "p"))
        #expect(try Self.counterOnDisk(keychain.path) == afterCreate + 2)
        _ = try keychain.delete(Query.genericPassword(service: "s", account: "a"))
        #expect(try Self.counterOnDisk(keychain.path) == afterCreate + 3)
        _ = try keychain.compact()
        #expect(try Self.counterOnDisk(keychain.path) == afterCreate + 4)
        try keychain.changeCredential(
            from: TestKeychain.password, to: .password("another"), iterations: TestKeychain.fastOptions.passwordIterations)
        #expect(try Self.counterOnDisk(keychain.path) == afterCreate + 5)
        // Reads leave it alone.
        #expect(try keychain.search(Query.genericPassword(service: "s")).count == 1)
        try keychain.refresh()
        #expect(try Self.counterOnDisk(keychain.path) == afterCreate + 5)
    }

    @Test("A read trusts an unchanged counter; another handle's write changes it, and the next read sees the write at once")
    func otherHandlesWritesAreSeenAtOnce() throws {
        let directory = TemporaryDirectory()
        let writer = try TestKeychain.create(in: directory)
        try writer.add(GenericPassword(service: "s", account: "first", password: "p"))
        let reader = try Keychain.open(at: writer.path, credential: TestKeychain.password)
        // However long a write takes, no path check falls due: only the counter can make the reader look.
        reader.withLock { reader.log.pathCheckInterval = .max }
        for index in 0..<50 {
            _ = try reader.search(Query.genericPassword(service: "s"))
            let checked = try #require(reader.withLock { reader.log.lastCurrent })
            let before = try Self.counterOnDisk(writer.path)
            #expect(checked.counter == before)
            // As of the reader's last path check, nothing has changed: the next read may skip the stat.
            #expect(reader.withLock { reader.log.isKnownCurrent(counter: before, now: checked.at) })
            try writer.add(GenericPassword(service: "s", account: "a\(index)", password: "p"))
            let after = try Self.counterOnDisk(writer.path)
            #expect(after == before &+ 1)
            // However soon the next read comes, the new counter makes it look.
            #expect(reader.withLock { !reader.log.isKnownCurrent(counter: after, now: checked.at) })
            #expect(try reader.search(Query.genericPassword(service: "s")).count == index + 2)
        }
    }

    /// A keychain with one item on a ``FaultyFileSystem``, which counts the calls made through it.
    private static func keychainCountingCalls(in directory: TemporaryDirectory) throws -> (Keychain, FaultyFileSystem) {
        let fileSystem = FaultyFileSystem()
        let keychain = try Keychain.createForTesting(at: directory.file("k.kcf"), fileSystem: fileSystem)
        try keychain.add(GenericPassword(service: "s", account: "a", password: "p"))
        return (keychain, fileSystem)
    }

    @Test("Reads inside the interval with the counter unchanged make no stat of the path; every read does when the interval is zero")
    func readsSkipTheStat() throws {
        let directory = TemporaryDirectory()
        let (keychain, fileSystem) = try Self.keychainCountingCalls(in: directory)
        func statsDuring100Reads() throws -> Int {
            fileSystem.resetCounts()
            for _ in 0..<100 { _ = try keychain.search(Query.genericPassword(service: "s")) }
            return fileSystem.calls(of: .pathIdentity)
        }
        keychain.withLock { keychain.log.pathCheckInterval = .max }
        #expect(try statsDuring100Reads() <= 1)
        keychain.withLock { keychain.log.pathCheckInterval = 0 }
        #expect(try statsDuring100Reads() == 100)
    }

    @Test("A catch-up that fails is not trusted afterwards: the next read looks the path up again")
    func failedCatchUpIsNotTrusted() throws {
        let directory = TemporaryDirectory()
        let (keychain, fileSystem) = try Self.keychainCountingCalls(in: directory)
        keychain.withLock { keychain.log.pathCheckInterval = .max }
        _ = try keychain.search(Query.genericPassword(service: "s"))
        fileSystem.fail(.pathIdentity, call: 1)
        #expect(throws: KeychainError.self) { try keychain.refresh() }
        fileSystem.heal()
        fileSystem.resetCounts()
        _ = try keychain.search(Query.genericPassword(service: "s"))
        #expect(fileSystem.calls(of: .pathIdentity) == 1)
    }

    @Test("A lock file made before the counter existed (empty) is extended to hold it, and the counter starts from zero")
    func emptyLockFileIsExtended() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("k.kcf")
        let first = try Keychain.create(at: path, credential: TestKeychain.password, options: TestKeychain.fastOptions)
        try first.add(GenericPassword(service: "s", account: "a", password: "p"))
        _ = consume first
        // As an earlier version left it: created, never written.
        try Data().write(to: URL(fileURLWithPath: path + ".lock"))
        let keychain = try Keychain.open(at: path, credential: TestKeychain.password)
        // Extended with zeros at open, then one exclusive section: opening removes temporary files a crashed
        // rewrite left when no other process holds the lock.
        let opened = try Self.counterOnDisk(path)
        #expect(opened == 1)
        try keychain.add(GenericPassword(service: "s", account: "b", password: "p"))
        #expect(try Self.counterOnDisk(path) == opened + 1)
        #expect(try keychain.search(Query.genericPassword(service: "s")).count == 2)
    }
}

@Suite("Random source: pooled system randomness")
struct RandomSourceTests {
    @Test("Draws from the pool never repeat a value, across refills and discards")
    func noRepeats() {
        var source = RandomSource(SystemRandomNumberGenerator())
        var seen = Set<UInt64>()
        for round in 0..<2_000 {
            for _ in 0..<(round % 45) { seen.insert(source.next()) }
            source.discardPool()
        }
        // 43,956 draws of 64 bits: a repeat means bytes were handed out twice.
        #expect(seen.count == (0..<2_000).reduce(0) { $0 + $1 % 45 })
    }

    @Test("A seeded generator is used as given, without pooling, so fixtures stay reproducible")
    func seededIsUnchanged() {
        struct Counter: RandomNumberGenerator {
            var value: UInt64 = 0
            mutating func next() -> UInt64 { value += 1; return value }
        }
        var source = RandomSource(Counter())
        #expect((0..<5).map { _ in source.next() } == [1, 2, 3, 4, 5])
    }
}
