#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file descriptor owned by the keychain.
///
/// `@unchecked Sendable`: the descriptor is an integer the kernel synchronises; positioned reads and writes
/// (pread/pwrite) share no offset state, and the Keychain serialises writers with its own lock.
final class PosixFileHandle: KeychainFileHandle, @unchecked Sendable {
    private var descriptor: Int32
    let path: String
    let writeRefusal: Int32?

    init(descriptor: Int32, path: String, writeRefusal: Int32? = nil) {
        self.descriptor = descriptor
        self.path = path
        self.writeRefusal = writeRefusal
    }

    deinit { close() }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        guard buffer.count > 0 else { return 0 }
        return try retrying("pread", path) { pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
        guard bytes.count > 0 else { return 0 }
        return try retrying("pwrite", path) { pwrite(descriptor, bytes.baseAddress, bytes.count, off_t(offset)) }
    }

    func size() throws(KeychainError) -> Int {
        var info = stat()
        _ = try retrying("fstat", path) { Int(fstat(descriptor, &info)) }
        return Int(info.st_size)
    }

    func truncate(to size: Int) throws(KeychainError) {
        _ = try retrying("ftruncate", path) { Int(ftruncate(descriptor, off_t(size))) }
    }

    func sync() throws(KeychainError) {
        #if canImport(Darwin)
        // On Apple platforms fsync does not flush the drive's cache; F_FULLFSYNC does.
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return }
        _ = try retrying("fsync", path) { Int(fsync(descriptor)) }
        #else
        _ = try retrying("fdatasync", path) { Int(fdatasync(descriptor)) }
        #endif
    }

    func identity() throws(KeychainError) -> FileIdentity {
        var info = stat()
        _ = try retrying("fstat", path) { Int(fstat(descriptor, &info)) }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    func linkCount() throws(KeychainError) -> Int {
        var info = stat()
        _ = try retrying("fstat", path) { Int(fstat(descriptor, &info)) }
        return Int(info.st_nlink)
    }

    func close() {
        if descriptor >= 0 {
            _ = systemClose(descriptor)
            descriptor = -1
        }
    }
}
