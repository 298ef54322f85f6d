import Foundation

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
