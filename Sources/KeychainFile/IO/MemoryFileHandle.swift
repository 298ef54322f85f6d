#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(KeychainFileInternals) import KeychainCrypto

/// An open ``MemoryFile``.
///
/// `@unchecked Sendable`: the file's bytes are guarded by its lock; `isClosed` is only set by `close`, which
/// the keychain calls under its own lock.
final class MemoryFileHandle: KeychainFileHandle, @unchecked Sendable {
    private let file: MemoryFile
    let path: String
    let writeRefusal: Int32?
    private var isClosed = false

    init(file: MemoryFile, path: String, writeRefusal: Int32? = nil) {
        self.file = file
        self.path = path
        self.writeRefusal = writeRefusal
    }

    private func withFile<Result>(_ operation: String, _ body: (inout [UInt8]) -> Result) throws(KeychainError) -> Result {
        guard !isClosed else { throw .io(operation: operation, errno: EBADF, path: path) }
        file.lock.lock()
        defer { file.lock.unlock() }
        return body(&file.bytes)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        try withFile("read") { bytes in
            guard offset < bytes.count, buffer.count > 0 else { return 0 }
            let count = min(buffer.count, bytes.count - offset)
            bytes.withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + count)]))
            }
            return count
        }
    }

    func write(_ source: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        // A file opened for reading only, as write(2) on such a descriptor does.
        if writeRefusal != nil { throw .io(operation: "write", errno: EBADF, path: path) }
        return try withFile("write") { bytes in
            if bytes.count < offset + source.count {
                bytes.append(contentsOf: repeatElement(0, count: offset + source.count - bytes.count))
            }
            bytes.withUnsafeMutableBytes { target in
                UnsafeMutableRawBufferPointer(rebasing: target[offset..<(offset + source.count)]).copyMemory(from: source)
            }
            return source.count
        }
    }

    func size() throws(KeychainError) -> Int {
        try withFile("size") { $0.count }
    }

    func truncate(to size: Int) throws(KeychainError) {
        if writeRefusal != nil { throw .io(operation: "truncate", errno: EINVAL, path: path) }
        try withFile("truncate") { bytes in
            if size < bytes.count {
                bytes.removeSubrange(size...)
            } else {
                bytes.append(contentsOf: repeatElement(0, count: size - bytes.count))
            }
        }
    }

    func sync() throws(KeychainError) {
        try withFile("sync") { _ in }
    }

    func identity() throws(KeychainError) -> FileIdentity {
        try withFile("identity") { _ in FileIdentity(device: 0, inode: file.inode) }
    }

    func linkCount() throws(KeychainError) -> Int {
        guard !isClosed else { throw .io(operation: "linkCount", errno: EBADF, path: path) }
        return file.linkCount
    }

    func close() { isClosed = true }
}
