import Foundation
import Testing
@testable import KeychainFile

/// Review of format version 3's engine (helper-43), finding 2: `Keychain.open` asks ``RecordLogV3/isVersion3(_:)``
/// before anything else, and it takes a file for version 3 when 16 bytes at any of the sixteen places a run B of
/// 1 … 16 pages would stand declare a version 3 header — even when the file's own first 16 bytes declare version 2
/// (or 1), which SPEC.md §20.4 makes decisive. Fifteen of those places lie in a version 2 file's log (its chunk 0),
/// so 16 bytes there, which parity repairs like any other damage of a record, turn a healthy version 2 keychain into
/// one that does not open ("neither copy of the header can be read"): damage misreported, and the repair version 2
/// would make never tried. (It also costs every version 1 and 2 open sixteen page reads and Reed–Solomon decodes.)
@Suite("Review v3: a version 2 file is told by its own header, not by bytes in its log")
struct V3DetectionOverridesVersion2HeaderTests {
    /// 16 bytes that declare a version 3 header of `pages` pages (magic, version 3, flags 0, a length of that many pages).
    static func declaration(pages: Int) -> [UInt8] {
        let length = (pages - 1) * HeaderPage.blockLength + 100
        return Format.magic + [0, 3, 0, 0] + [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
    }

    static func versionTwoFile(in directory: TemporaryDirectory) throws -> (path: String, expected: [String: [UInt8]]) {
        let keychain = try V2Keychain.create(in: directory)
        // More than one chunk of records, so that every place below lies in a complete chunk with its parity.
        let expected = try V2Keychain.fill(keychain, count: 80, perBatch: 10, secretSize: 1_000)
        let path = directory.file("v2.kcf")
        #expect(try fileBytes(path).count > HeaderRunV3.runBOffset(pageCount: 16) + 4_096)
        return (path, expected)
    }

    @Test("Control: 16 damaged bytes in a version 2 record are repaired by parity, and the keychain opens whole")
    func sixteenBytesElsewhereAreRepaired() throws {
        let directory = TemporaryDirectory()
        let (path, expected) = try Self.versionTwoFile(in: directory)
        var bytes = try fileBytes(path)
        let offset = HeaderRunV3.runBOffset(pageCount: 3) + 100
        bytes.replaceSubrange(offset..<(offset + 16), with: Self.declaration(pages: 3))
        try writeFileBytes(bytes, to: path)
        #expect(try liveSecrets(V2Keychain.open(path)) == expected)
    }

    @Test("The same 16 bytes where a run B of that many pages would stand: the version 2 file still opens whole, as version 2",
          arguments: [2, 3, 9, 15])
    func versionTwoHeaderDecides(pages: Int) throws {
        let directory = TemporaryDirectory()
        let (path, expected) = try Self.versionTwoFile(in: directory)
        var bytes = try fileBytes(path)
        #expect(FileHeaderV2.declaredLength(Array(bytes[0..<16])) != nil)
        let offset = HeaderRunV3.runBOffset(pageCount: pages)
        bytes.replaceSubrange(offset..<(offset + 16), with: Self.declaration(pages: pages))
        try writeFileBytes(bytes, to: path)
        let file = try PosixFileSystem().openExisting(path)
        defer { file.close() }
        #expect(try !RecordLogV3.isVersion3(file), "a file whose first 16 bytes declare version 2 was taken for version 3")
        let opened = try V2Keychain.open(path)
        #expect(opened.fileFormatVersion == 2)
        #expect(try liveSecrets(opened) == expected)
    }
}
