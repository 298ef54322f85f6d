#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The monotonic clock (CLOCK_MONOTONIC), which reads without a system call on Linux and Apple platforms.
enum MonotonicClock {
    /// Nanoseconds since an arbitrary fixed point; only differences mean anything.
    static func nanoseconds() -> UInt64 {
        var now = timespec()
        _ = clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }
}
