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
