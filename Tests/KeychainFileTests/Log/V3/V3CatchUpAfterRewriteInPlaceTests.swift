import Foundation
import Testing
@testable import KeychainFile

/// Catching up with a version 3 file that another rewrite replaced in place — the same file, written over byte for
/// byte (a copy put back with `cp`), not renamed over — reads the new file from its header (SPEC.md §16). Found by
/// the open-v3 fuzz target: a reader whose log ended at its rewrite's end found no commit slot of its epoch in the
/// new bytes, took its old header's rewrite end for the log's end, and called itself caught up at the old head.
@Suite("Format version 3: catching up with a file rewritten in place")
struct V3CatchUpAfterRewriteInPlaceTests {
    @Test("A reader at a rewrite's end follows a rewrite put in place of its file, and the append after it")
    func followsRewriteInPlace() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v3.kcf")
        let writer = try V3Keychain.create(in: directory)
        try KeychainV3GroupTests.add(writer, group: "", count: 2)
        try KeychainV3GroupTests.add(writer, group: KeychainV3GroupTests.groupA, count: 1)
        try writer.compact()
        // The reader's log ends where the compaction's rewrite ends.
        let reader = try V3Keychain.open(path)
        #expect(reader.count == 3)
        // A copy of the file gains a group (a rewrite, a new epoch) and an item in it, and is written over the file.
        let copyPath = directory.file("copy.kcf")
        try Data(try fileBytes(path)).write(to: URL(fileURLWithPath: copyPath))
        let copy = try V3Keychain.open(copyPath)
        try KeychainV3GroupTests.add(copy, group: KeychainV3GroupTests.groupB, count: 1)
        let rewritten = try fileBytes(copyPath)
        let file = try #require(FileHandle(forWritingAtPath: path))
        file.write(Data(rewritten))
        file.truncateFile(atOffset: UInt64(rewritten.count))
        file.closeFile()

        try reader.refresh()
        #expect(reader.head == copy.head)
        #expect(reader.count == 4)
        let found = try reader.search(
            .genericPassword(service: "svc", account: "\(KeychainV3GroupTests.groupB)-0"), returning: .data)
        #expect(found.count == 1)
    }
}
