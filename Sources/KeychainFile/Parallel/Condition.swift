#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(KeychainFileInternals) import KeychainCrypto

/// A lock with a condition variable: a ``Lock`` and a heap-allocated `pthread_cond_t` (heap, so that Swift
/// never moves it). A thread holding the lock can wait until another changes the state the lock guards and
/// broadcasts.
///
/// The window workers wait on it for windows to open, and the in-memory file system for its shared/exclusive
/// file locks, in place of Foundation's `NSCondition`, which FoundationEssentials lacks.
///
/// For example:
/// ```swift
/// condition.lock()
/// defer { condition.unlock() }
/// while busy { condition.wait() }      // wakes may be spurious: always wait in a loop over the state
/// ```
///
/// `@unchecked Sendable`: the lock and the condition variable are the synchronisation primitives
/// themselves; their addresses never change and they are only touched through `pthread_*`, which are
/// thread-safe by definition.
final class Condition: @unchecked Sendable {
    private let mutex = Lock()
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        let result = pthread_cond_init(condition, nil)
        precondition(result == 0, "pthread_cond_init failed: \(result)")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    /// Takes the lock, waiting while another thread holds it; pair every call with ``unlock()``.
    func lock() {
        mutex.lock()
    }

    /// Releases the lock taken by ``lock()`` on the same thread.
    func unlock() {
        mutex.unlock()
    }

    /// Releases the lock, sleeps until a ``broadcast()`` (or a spurious wake), and takes the lock again before
    /// returning. Call it only while holding the lock, in a loop that checks the state it waits for.
    func wait() {
        mutex.wait(on: condition)
    }

    /// Wakes every thread waiting in ``wait()``; each returns once it has the lock again.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
