#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The change counter in the first eight bytes of the lock file (SPEC.md §16), mapped shared, so that a read
/// can tell whether any process finished an exclusive section since it last looked without a system call.
///
/// This is the one place the module touches memory that other processes share. Loads and stores are plain
/// aligned 8-byte accesses, which the 64-bit platforms Swift supports perform whole (no torn values). Only the
/// holder of the exclusive lock stores, so no increment is lost; it stores before it releases the lock (a
/// system call), so a process whose call begins after the writer's call returned loads the new value.
///
/// The mapping assumes the lock file is never cut below eight bytes while it is in use (no writer following
/// §16 cuts it; a process that did would make the next load fault with SIGBUS, as with SQLite's and LMDB's
/// shared-memory files).
struct LockFileCounter {
    /// The counter's size in the file, and the length mapped.
    static let size = 8
    private let address: UnsafeMutableRawPointer

    /// Maps the counter of the lock file open (read-write) as `descriptor`, first extending a shorter file
    /// (a new one, or one made before the counter existed) with zeros. `nil` when the file cannot be extended
    /// or mapped; the caller then reads and writes the counter with `pread`/`pwrite`.
    init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        // Growing only: ftruncate to the same size is a no-op, so two processes extending at once agree.
        if Int(info.st_size) < Self.size, ftruncate(descriptor, off_t(Self.size)) != 0 { return nil }
        let mapped = mmap(nil, Self.size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0)
        // MAP_FAILED is ((void *)-1), a macro Swift does not import.
        guard let mapped, mapped != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        address = mapped
    }

    /// The counter's current value (little-endian in the file).
    var value: UInt64 { UInt64(littleEndian: address.load(as: UInt64.self)) }

    /// Adds one (wrapping). Only under the exclusive lock.
    func increment() {
        address.storeBytes(of: (value &+ 1).littleEndian, as: UInt64.self)
    }

    /// Removes the mapping; the counter must not be used after.
    func unmap() {
        _ = munmap(address, Self.size)
    }

    /// Adds one to the counter of the lock file open as `descriptor` with `pread`/`pwrite`: for a handle whose
    /// mapping failed, so that processes that did map it still see this one's exclusive sections. Only under
    /// the exclusive lock. Best effort: if it fails, a reader notices the change at its next path check.
    static func incrementWithoutMapping(descriptor: Int32) {
        var bytes = [UInt8](repeating: 0, count: size)
        let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, size, 0) }
        guard got >= 0 else { return }
        var counter: UInt64 = 0
        for index in (0..<size).reversed() { counter = counter << 8 | UInt64(bytes[index]) }
        counter &+= 1
        for index in 0..<size { bytes[index] = UInt8(truncatingIfNeeded: counter >> (8 * index)) }
        _ = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, size, 0) }
    }
}
