#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(KeychainFileInternals) import KeychainCrypto

/// A random generator the keychain owns: the system generator, or a seeded one for reproducible fixtures.
///
/// The standard library's system generator makes one getrandom system call per 8 bytes; an item costs
/// 16 bytes of id and two 12-byte nonces, so a bulk load spent more time in those calls than in sealing.
/// With the system generator this source therefore draws 256 bytes at a time with `getentropy` (the same
/// kernel generator) and hands them out. The pool must never outlive one operation: a process forked
/// while a pool was full would otherwise hand the same bytes — the same nonces — to parent and child.
/// ``Keychain`` calls ``discardPool()`` when every write operation ends, under its lock, so unused bytes
/// are wiped before any later operation and never seen twice.
struct RandomSource: RandomNumberGenerator, @unchecked Sendable {
    // `@unchecked Sendable`: the Keychain only uses it under its lock; fixture generators are single-threaded.
    private var base: any RandomNumberGenerator
    /// Present when `base` is the system generator.
    private let pool: RandomPool?

    init(_ base: any RandomNumberGenerator) {
        self.base = base
        pool = base is SystemRandomNumberGenerator ? RandomPool() : nil
    }

    mutating func next() -> UInt64 {
        if let pool, let value = pool.next() { return value }
        return base.next()
    }

    /// Wipes the bytes drawn and not used yet.
    func discardPool() { pool?.discard() }
}

/// 256 bytes from the kernel's generator, handed out 8 at a time and wiped once used or discarded.
///
/// `@unchecked Sendable` through ``RandomSource``: used only under the keychain's lock.
final class RandomPool {
    private static let size = 256 // getentropy's largest request
    private let bytes = UnsafeMutableRawPointer.allocate(byteCount: RandomPool.size, alignment: 8)
    /// Bytes before `offset` are used (and zeroed); `size` means empty.
    private var offset = RandomPool.size

    init() { wipe(0..<Self.size) }

    deinit {
        wipe(0..<Self.size)
        bytes.deallocate()
    }

    private func wipe(_ range: Range<Int>) {
        secureZeroMemory(UnsafeMutableRawBufferPointer(start: bytes + range.lowerBound, count: range.count))
    }

    /// The next 8 bytes, or `nil` if the kernel refused to fill the pool (the caller then asks the system
    /// generator directly).
    func next() -> UInt64? {
        if offset == Self.size {
            guard getentropy(bytes, Self.size) == 0 else { return nil }
            offset = 0
        }
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        wipe(offset..<(offset + 8))
        offset += 8
        return value
    }

    func discard() {
        guard offset < Self.size else { return }
        wipe(offset..<Self.size)
        offset = Self.size
    }
}
