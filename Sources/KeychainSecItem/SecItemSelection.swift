import Foundation
import KeychainFile

/// Where the selections are kept: a program-wide one under a lock, and a task-local one.
enum SecItemSelection {
    /// The program-wide selection.
    static let global = LockedSelection()

    /// The selection ``SecItemKeychain/run(_:)`` bound to the current task, if any.
    @TaskLocal static var scoped: SecItemKeychain?

    /// A selection that any thread may read and replace.
    final class LockedSelection: @unchecked Sendable {
        // `@unchecked Sendable`: `value` is read and written only while `lock` is held.
        private let lock = NSLock()
        private var value: SecItemKeychain?

        func get() -> SecItemKeychain? {
            lock.lock()
            defer { lock.unlock() }
            return value
        }

        func set(_ newValue: SecItemKeychain?) {
            lock.lock()
            defer { lock.unlock() }
            value = newValue
        }
    }
}
