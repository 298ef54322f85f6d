import Foundation

/// SplitMix64: a small seeded generator. Fixtures only — it is predictable by design, so every key, salt
/// and nonce in a fixture is reproducible; never use it for anything that protects data.
public struct FixtureRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

/// A clock the generator sets explicitly, so it knows the date the keychain stamps on each change.
///
/// `@unchecked Sendable`: the time is guarded by `lock`.
public final class FixtureClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    public init(start: Date) { current = start }

    /// The time the keychain will read next.
    public var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// Moves the clock forward by whole seconds and returns the new time.
    @discardableResult
    public func advance(seconds: Int = 1) -> Date {
        lock.lock()
        defer { lock.unlock() }
        current = current.addingTimeInterval(TimeInterval(seconds))
        return current
    }
}
