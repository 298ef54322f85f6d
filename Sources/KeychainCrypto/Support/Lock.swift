#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutual-exclusion lock over a heap-allocated `pthread_mutex_t` (heap, so that Swift never moves it).
///
/// KeychainFile uses it too (SPI), in place of Foundation's `NSLock`, which FoundationEssentials lacks.
///
/// `@unchecked Sendable`: the mutex is the synchronisation primitive itself; its address never changes
/// and it is only touched through `pthread_mutex_*`, which are thread-safe by definition.
@_spi(KeychainFileInternals)
public final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Takes the lock, waiting while another thread holds it; pair every call with ``unlock()``.
    public func lock() {
        // A default mutex blocks rather than fail; were it to fail (EDEADLK, EINVAL), carrying on without the
        // lock would break everything that relies on it, such as the keychain's unchecked index accesses.
        let result = pthread_mutex_lock(mutex)
        precondition(result == 0, "pthread_mutex_lock failed: \(result)")
    }

    /// Releases the lock taken by ``lock()`` on the same thread.
    public func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// Waits on `condition`, releasing this lock while asleep and holding it again on return
    /// (`pthread_cond_wait`): what KeychainFile's `Condition` is built on. Call it only while holding the lock.
    public func wait(on condition: UnsafeMutablePointer<pthread_cond_t>) {
        pthread_cond_wait(condition, mutex)
    }

    /// Runs `body` while holding the lock.
    public func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
