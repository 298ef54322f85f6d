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

/// A shared/exclusive lock standing in for `flock` on a lock file.
///
/// `@unchecked Sendable`: its state sits behind `condition`.
final class MemoryLock: @unchecked Sendable {
    private let condition = Condition()
    private var readers = 0
    private var writer = false
    private var changes: UInt64 = 0
    private var acknowledgementBytes: [UInt8]? = nil

    /// The acknowledgement block standing in for the lock file's (SPEC.md §16.1).
    var acknowledgement: [UInt8]? {
        get {
            condition.lock()
            defer { condition.unlock() }
            return acknowledgementBytes
        }
        set {
            condition.lock()
            defer { condition.unlock() }
            acknowledgementBytes = newValue
        }
    }

    /// The change counter standing in for the lock file's (SPEC.md §16).
    var changeCounter: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return changes
    }

    func lock(exclusive: Bool, wait: Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while writer || (exclusive && readers > 0) {
            guard wait else { return false }
            condition.wait()
        }
        if exclusive { writer = true } else { readers += 1 }
        return true
    }

    /// Releases the lock; after an exclusive one that `changed` the file, adds one to the change counter.
    func unlock(exclusive: Bool, changed: Bool = true) {
        condition.lock()
        defer { condition.unlock() }
        if exclusive {
            if changed { changes &+= 1 }
            writer = false
        } else {
            readers -= 1
        }
        condition.broadcast()
    }
}
