#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The change counter in the first eight bytes of the lock file (SPEC.md §16), mapped shared and read-only, so
/// that a read can tell whether any process finished an exclusive section since it last looked without a
/// system call.
///
/// This is the one place the module reads memory that other processes write. The counter is loaded with an
/// acquiring atomic load, so the `stat` a reader makes after it cannot see an older file than the counter
/// does. It is only ever changed with `pwrite` under the exclusive lock ("increment"), after the writer's
/// changes to the keychain file and before it releases the lock; the page cache makes the write visible
/// through every mapping. The mapping is read-only so that it never needs disk space (a store into a sparse
/// or copy-on-write page on a full disk would raise SIGBUS); a lock file cut below eight bytes while mapped
/// would still fault, as SQLite's and LMDB's shared-memory files do (SPEC.md §13).
struct LockFileCounter {
    /// The counter's size in the file, and the length mapped.
    static let size = 8
    private let address: UnsafeRawPointer

    /// Maps the counter of the lock file open as `descriptor`, first setting the length of a shorter file (a
    /// new one, or one made before the counter existed) to eight bytes, which zero-fills the missing bytes and
    /// keeps the others. `nil` when the file cannot be extended or mapped, or the platform has no atomic
    /// loads (before macOS 15 and its siblings): the caller then looks the path up on every read.
    init?(descriptor: Int32) {
        guard #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        if Int(info.st_size) < Self.size, ftruncate(descriptor, off_t(Self.size)) != 0 { return nil }
        #if os(Linux)
        // Give the (sparse) bytes a block now, so that an increment on a nearly full disk does not fail for want
        // of one. Best effort: copy-on-write file systems need new space for every write anyway.
        _ = posix_fallocate(descriptor, 0, off_t(Self.size))
        #endif
        let mapped = mmap(nil, Self.size, PROT_READ, MAP_SHARED, descriptor, 0)
        // MAP_FAILED is ((void *)-1), a macro Swift does not import.
        guard let mapped, mapped != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        address = UnsafeRawPointer(mapped)
    }

    /// The counter's current value (little-endian in the file).
    var value: UInt64 {
        if #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) {
            // The mapping is page-aligned, so the counter is aligned for an 8-byte atomic.
            let counter = address.bindMemory(to: Atomic<UInt64>.self, capacity: 1)
            return UInt64(littleEndian: counter.pointee.load(ordering: .acquiring))
        }
        preconditionFailure("LockFileCounter is only made where atomics are available")
    }

    /// Removes the mapping; the counter must not be used after.
    func unmap() {
        _ = munmap(UnsafeMutableRawPointer(mutating: address), Self.size)
    }

    /// Adds one (wrapping) to the counter of the lock file open as `descriptor`, with `pread` and `pwrite`.
    /// Only under the exclusive lock, after every change to the keychain file. Returns false if either call
    /// failed: readers that skip the path check then see this process's changes within SPEC.md §16's 10 ms.
    @discardableResult
    static func increment(descriptor: Int32) -> Bool {
        var bytes = [UInt8](repeating: 0, count: size)
        // A file shorter than eight bytes reads as zeros past its end.
        var got = 0
        while got < size {
            let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + got, size - got, off_t(got)) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return false }
            if count == 0 { break }
            got += count
        }
        let counter = UInt64(littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }) &+ 1
        bytes = withUnsafeBytes(of: counter.littleEndian) { Array($0) }
        var written = 0
        while written < size {
            let count = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + written, size - written, off_t(written)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            written += count
        }
        return true
    }
}
