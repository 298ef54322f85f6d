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

/// One holder of a ``MemoryLock``; it remembers what it holds so that `unlock` releases the right kind.
///
/// `@unchecked Sendable`: `held` is changed only by the one keychain that owns the handle, under its lock.
final class MemoryLockHandle: KeychainLockHandle, @unchecked Sendable {
    private let shared: MemoryLock
    private var held: Bool? = nil

    init(lock: MemoryLock) { shared = lock }

    var changeCounter: UInt64? { shared.changeCounter }

    func readAcknowledgement() -> [UInt8]? { shared.acknowledgement }

    func writeAcknowledgement(_ bytes: [UInt8]) throws(KeychainError) { shared.acknowledgement = bytes }

    func withdrawAcknowledgement() throws(KeychainError) { shared.acknowledgement = nil }

    func lock(exclusive: Bool, wait: Bool) throws(KeychainError) -> Bool {
        guard held == nil else { return true }
        guard shared.lock(exclusive: exclusive, wait: wait) else { return false }
        held = exclusive
        return true
    }

    func unlock() {
        guard let exclusive = held else { return }
        shared.unlock(exclusive: exclusive)
        held = nil
    }

    func unlockUnchanged() {
        guard let exclusive = held else { return }
        shared.unlock(exclusive: exclusive, changed: false)
        held = nil
    }
}
