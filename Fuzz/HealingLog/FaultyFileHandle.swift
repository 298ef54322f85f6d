#if canImport(Glibc)
import Glibc
#endif
@testable import KeychainFile

/// An in-memory file whose reads fail with EIO wherever they touch one of `unreadable` (physical offsets), as
/// a disk's bad sectors do.
///
/// `@unchecked Sendable`: one execution uses it, on one thread.
final class FaultyFileHandle: KeychainFileHandle, @unchecked Sendable {
    let inner: MemoryFileHandle
    let unreadable: [Range<Int>]
    var path: String { inner.path }
    var writeRefusal: Int32? { nil }

    init(bytes: [UInt8], unreadable: [Range<Int>] = []) {
        let file = MemoryFile(inode: 1)
        file.bytes = bytes
        inner = MemoryFileHandle(file: file, path: "/fuzz-v2.kcf")
        self.unreadable = unreadable
    }

    func linkCount() throws(KeychainError) -> Int { 1 }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        let range = offset..<(offset + buffer.count)
        if unreadable.contains(where: { $0.overlaps(range) }) { throw .io(operation: "pread", errno: EIO, path: path) }
        return try inner.read(into: buffer, at: offset)
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) -> Int { try inner.write(bytes, at: offset) }
    func size() throws(KeychainError) -> Int { try inner.size() }
    func truncate(to size: Int) throws(KeychainError) { try inner.truncate(to: size) }
    func sync() throws(KeychainError) { try inner.sync() }
    func identity() throws(KeychainError) -> FileIdentity { try inner.identity() }
    func close() { inner.close() }
}
