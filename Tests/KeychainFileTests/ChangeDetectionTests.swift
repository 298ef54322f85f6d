import Foundation
import Testing
@testable import KeychainFile

/// A read notices another process's changes from one fstat of the open file (SPEC.md §16): its size, link
/// count and status-change time. These tests make a change that leaves the size exactly as it was — a
/// compaction of an already compact file renamed over the path — so that only the link count and the
/// change time can reveal it.
@Suite("Change detection: a read notices a same-size file renamed over the path")
struct ChangeDetectionTests {
    private static func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? -1
    }

    /// Opens a reader and a writer on one compact file, lets the reader record a quiet status, compacts
    /// through the writer and returns the reader's epoch after its next read.
    private static func epochSeenAfterSameSizeCompaction(extraLink: Bool) throws -> (seen: UInt64, written: UInt64) {
        let directory = TemporaryDirectory()
        let writer = try TestKeychain.create(in: directory)
        try writer.batch { (batch) throws(KeychainError) in
            for index in 0..<3 { try batch.add(GenericPassword(service: "s", account: "a\(index)", password: "p")) }
        }
        _ = try writer.compact()
        if extraLink { try FileManager.default.linkItem(atPath: writer.path, toPath: directory.file("second-name.kcf")) }
        let reader = try Keychain.open(at: writer.path, credential: TestKeychain.password)
        // Two reads: the first makes the full check and remembers the status, the second takes the fast path.
        _ = try reader.search(Query.genericPassword(service: "s"))
        _ = try reader.search(Query.genericPassword(service: "s"))
        let sizeBefore = try fileSize(writer.path)
        _ = try writer.compact()
        // The precondition that makes this test about links: same size, so the size alone says nothing.
        #expect(try fileSize(writer.path) == sizeBefore)
        _ = try reader.search(Query.genericPassword(service: "s"))
        return (reader.head.epoch, writer.head.epoch)
    }

    @Test("The open file unlinked by the rename (link count 1 → 0) is noticed")
    func renameOverSingleLink() throws {
        let result = try Self.epochSeenAfterSameSizeCompaction(extraLink: false)
        #expect(result.written == 3)
        #expect(result.seen == result.written)
    }

    @Test("With a second hard link (link count 2 → 1) the rename is noticed too")
    func renameOverHardLinkedFile() throws {
        let result = try Self.epochSeenAfterSameSizeCompaction(extraLink: true)
        #expect(result.written == 3)
        #expect(result.seen == result.written)
    }

    @Test("In the memory file system a rename over the path changes the open file's status too")
    func memoryFileSystemStatus() throws {
        let fileSystem = MemoryFileSystem()
        let first = try fileSystem.createExclusive("/k")
        _ = try [UInt8](repeating: 1, count: 10).withUnsafeBytes { (bytes) throws(KeychainError) in try first.write(bytes, at: 0) }
        let before = try first.status()
        let second = try fileSystem.createExclusive("/k.new")
        _ = try [UInt8](repeating: 2, count: 10).withUnsafeBytes { (bytes) throws(KeychainError) in try second.write(bytes, at: 0) }
        try fileSystem.rename("/k.new", to: "/k")
        let after = try first.status()
        #expect(after.size == before.size)
        #expect(after.linkCount == 0)
        #expect(after != before)
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
