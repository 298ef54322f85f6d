#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic time in nanoseconds (CLOCK_MONOTONIC), cheap enough to read around a single call.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Keeps a value alive so the optimiser cannot drop the work that produced it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// Runs `body` repeatedly for about `seconds` and returns the best rate seen over `trials` trials, in
/// calls per second. Each trial grows its batch until one batch takes at least a tenth of the time.
func measureRate(seconds: Double, trials: Int = 5, _ body: () -> Void) -> Double {
    // Warm up caches and lazily initialised state.
    for _ in 0..<3 { body() }
    var best = 0.0
    for _ in 0..<trials {
        var batch = 1
        var totalCalls = 0
        var totalNanoseconds: UInt64 = 0
        let budget = UInt64(seconds / Double(trials) * 1e9)
        while totalNanoseconds < budget {
            let start = monotonicNanoseconds()
            for _ in 0..<batch { body() }
            let elapsed = monotonicNanoseconds() - start
            totalCalls += batch
            totalNanoseconds += elapsed
            if elapsed < budget / 10 { batch *= 2 }
        }
        best = max(best, Double(totalCalls) / (Double(totalNanoseconds) / 1e9))
    }
    return best
}
