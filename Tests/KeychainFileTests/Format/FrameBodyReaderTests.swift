import Foundation
import Testing
@testable import KeychainFile

/// The bounded window through which a replay reads a frame body (``FrameBodyReader``), with windows far
/// smaller than the fields so that every field straddles windows.
@Suite("Frame body reader: bounded windows")
struct FrameBodyReaderTests {
    /// A body of `u8 ‖ u64 ‖ u32 ‖ 300 bytes ‖ u32 ‖ 5 bytes` at offset 100 of a file.
    static func makeFile(_ directory: TemporaryDirectory) throws -> (path: String, body: [UInt8]) {
        var writer = ByteWriter()
        writer.writeUInt8(3)
        writer.writeUInt64(0x0102_0304_0506_0708)
        writer.writeUInt32(300)
        writer.writeBytes((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        writer.writeUInt32(0xA1B2_C3D4)
        writer.writeBytes([9, 8, 7, 6, 5])
        let path = directory.file("body.bin")
        try writeFileBytes([UInt8](repeating: 0xEE, count: 100) + writer.bytes + [0xEE, 0xEE], to: path)
        return (path, writer.bytes)
    }

    @Test("Fields read through windows of 1 to 400 bytes equal the bytes written", arguments: [1, 7, 64, 299, 301, 400])
    func readsAcrossWindows(windowSize: Int) throws {
        let directory = TemporaryDirectory()
        let (path, body) = try Self.makeFile(directory)
        let file = try PosixFileSystem().openExisting(path)
        defer { file.close() }
        var reader = FrameBodyReader(file: file, bodyOffset: 100, bodyLength: body.count, windowSize: windowSize)
        #expect(try reader.readUInt8("kind") == 3)
        #expect(try reader.readUInt64("sequence") == 0x0102_0304_0506_0708)
        let length = Int(try reader.readUInt32("length"))
        #expect(length == 300)
        let range = try reader.read(length, "box")
        #expect(Array(reader.window[range]) == Array(body[13..<313]))
        #expect(try reader.readUInt32("second") == 0xA1B2_C3D4)
        let tail = try reader.read(5, "tail")
        #expect(Array(reader.window[tail]) == [9, 8, 7, 6, 5])
        #expect(reader.isAtEnd)
        // Past the end of the body (not of the file): a truncated field at the body's end.
        #expect(throws: FrameProblem.self) { try reader.readUInt8("beyond") }
        do throws(FrameProblem) {
            _ = try reader.readUInt8("beyond")
        } catch {
            #expect(error.offset == 100 + body.count)
            #expect(error.reason == "truncated beyond")
            #expect(error.ioError == nil)
        }
    }

    @Test("A failing read is a problem that carries the file's error")
    func readFailureCarriesTheError() throws {
        let directory = TemporaryDirectory()
        let (path, body) = try Self.makeFile(directory)
        let fileSystem = FaultyFileSystem()
        let file = try fileSystem.openExisting(path)
        defer { file.close() }
        var reader = FrameBodyReader(file: file, bodyOffset: 100, bodyLength: body.count, windowSize: 16)
        _ = try reader.readUInt8("kind")
        fileSystem.fail(.read)
        do throws(FrameProblem) {
            _ = try reader.read(300, "box")
            Issue.record("the read did not fail")
        } catch {
            #expect(error.ioError?.isIOError == true, "\(error)")
        }
    }
}

private extension KeychainError {
    var isIOError: Bool {
        if case .io = self { return true }
        return false
    }
}
