import Foundation
import Testing
@testable import KeychainFile

/// A keychain open on a file that another copy, rewritten to exactly the same size, is written over in place — the
/// same file (inode), byte for byte, as `cp` or `rsync --inplace` of a copy leaves it — reads the new file from its
/// header before it reads or writes again (SPEC.md §16). Found by the open-v3 fuzz target: the file's identity, size
/// and (for a log at its rewrite's own head) commit slots all looked unchanged, so the open keychain called itself
/// caught up at the old epoch, and its next write appended records of that epoch to a file of the newer one — an
/// add every later open would miss. Each format version had the same hole.
@Suite("Catching up with a same-size copy written over the file in place")
struct CatchUpAfterSameSizeCopyInPlaceTests {
    /// A new keychain of `formatVersion` at `directory/name`.
    static func create(_ formatVersion: Int, in directory: TemporaryDirectory, name: String) throws -> Keychain {
        try TestKeychain.create(in: directory, name: name, formatVersion: formatVersion)
    }

    /// Opens `path`, keeping a version 1 file at version 1 through its rewrites.
    static func open(_ path: String) throws -> Keychain {
        try Keychain.open(at: path, credential: TestKeychain.password, options: TestKeychain.versionOneOpenOptions)
    }

    /// Writes `bytes` over the file at `path` from its first byte, keeping the file (no rename, no truncation first).
    static func writeInPlace(_ bytes: [UInt8], over path: String) throws {
        let file = try #require(FileHandle(forWritingAtPath: path))
        defer { file.closeFile() }
        file.write(Data(bytes))
        file.truncateFile(atOffset: UInt64(bytes.count))
    }

    /// The keychain at `path` is opened; a copy of it is compacted (a new epoch, the same size) and written over it.
    /// Returns the open keychain and the compacted copy's head.
    static func openThenOverwriteWithCompactedCopy(
        _ formatVersion: Int, in directory: TemporaryDirectory
    ) throws -> (reader: Keychain, copyHead: Head, path: String) {
        let path = directory.file("keychain.kcf")
        let created = try create(formatVersion, in: directory, name: "keychain.kcf")
        let createdHead = created.head
        let reader = try open(path)
        #expect(reader.head == createdHead)
        let copyPath = directory.file("copy.kcf")
        try writeFileBytes(try fileBytes(path), to: copyPath)
        let copy = try open(copyPath)
        _ = try copy.compact()
        let copyHead = copy.head
        let before = try fileBytes(path)
        let after = try fileBytes(copyPath)
        // The case under test: nothing but the bytes tells the two apart.
        try #require(after.count == before.count, "the compacted copy has another size (\(after.count), not \(before.count))")
        try #require(copyHead.epoch > createdHead.epoch)
        try writeInPlace(after, over: path)
        return (reader, copyHead, path)
    }

    @Test("A refresh follows a same-size copy written over the file in place", arguments: [1, 2, 3])
    func refreshFollowsCopy(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let (reader, copyHead, _) = try Self.openThenOverwriteWithCompactedCopy(formatVersion, in: directory)
        try reader.refresh()
        #expect(reader.head == copyHead)
    }

    @Test("A write after a same-size copy was written over the file in place lands in the copy's epoch, and every later open reads it",
          arguments: [1, 2, 3])
    func writeLandsInCopysEpoch(formatVersion: Int) throws {
        let directory = TemporaryDirectory()
        let (reader, copyHead, path) = try Self.openThenOverwriteWithCompactedCopy(formatVersion, in: directory)
        try reader.add(GenericPassword(service: "svc", account: "after the copy", password: "written after the copy was put back"))
        #expect(reader.head.epoch == copyHead.epoch)
        #expect(reader.head.sequence == copyHead.sequence + 1)

        let reopened = try Self.open(path)
        #expect(reopened.head == reader.head)
        let found = try reopened.search(.genericPassword(service: "svc", account: "after the copy"), returning: .data)
        #expect(found.map(\.value) == [Array("written after the copy was put back".utf8)])
    }
}
