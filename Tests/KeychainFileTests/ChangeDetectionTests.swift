import Foundation
import Testing
@testable import KeychainFile

/// A read notices another process's changes from one stat of the path (SPEC.md §16): the file there and its
/// size. These tests make changes that leave the size exactly as it was — a compaction of an already compact
/// file renamed over the path, a directory swapped for a copy — so that only the file's identity reveals them.
@Suite("Change detection: a read notices another file at the path, even of the same size")
struct ChangeDetectionTests {
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
        if extraLink { try FileManager.default.linkItem(atPath: writer.path, toPath: directory.file("second-name.kcf")) }
        let reader = try Keychain.open(at: writer.path, credential: TestKeychain.password)
        _ = try reader.search(Query.genericPassword(service: "s"))
        _ = try reader.search(Query.genericPassword(service: "s"))
        let sizeBefore = try fileSize(writer.path)
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

    @Test("With a second hard link to the old file the rename is noticed too")
    func renameOverHardLinkedFile() throws {
        let result = try Self.epochSeenAfterSameSizeCompaction(extraLink: true)
        #expect(result.written == 3)
        #expect(result.seen == result.written)
    }

    @Test("A directory above the file renamed and a copy put in its place is noticed: the open file itself is unchanged")
    func directorySwap() throws {
        let directory = TemporaryDirectory()
        let folder = directory.file("live")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let path = folder + "/k.kcf"
        let first = try Keychain.create(at: path, credential: TestKeychain.password, options: TestKeychain.fastOptions)
        try first.add(GenericPassword(service: "s", account: "before", password: "p"))
        let reader = try Keychain.open(at: path, credential: TestKeychain.password)
        _ = try reader.search(Query.genericPassword(service: "s"))
        _ = try reader.search(Query.genericPassword(service: "s"))
        // The directory is moved away and a copy of the keychain (another inode) restored in its place, where
        // another process then commits. Nothing about the file the reader has open changes.
        try FileManager.default.moveItem(atPath: folder, toPath: directory.file("moved"))
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: directory.file("moved") + "/k.kcf", toPath: path)
        let writer = try Keychain.open(at: path, credential: TestKeychain.password)
        try writer.add(GenericPassword(service: "s", account: "after", password: "p"))
        let found = try reader.search(Query.genericPassword(service: "s"))
        #expect(found.count == 2)
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
