import Foundation

/// Each thread's last SecItem failure, as `errno` is each thread's last system error: a call on one thread
/// never changes what another thread reads.
enum SecItemLastFailure {
    /// The key in the thread dictionary.
    private static let key = "KeychainSecItem.lastFailure"

    /// Holds the failure in the thread dictionary, which takes objects.
    private final class Box {
        let failure: SecItemFailureReason
        init(_ failure: SecItemFailureReason) { self.failure = failure }
    }

    /// This thread's last failure, or `nil` if its last SecItem call succeeded (or it made none).
    static var current: SecItemFailureReason? {
        (Thread.current.threadDictionary[key] as? Box)?.failure
    }

    /// Records the outcome of a SecItem call on this thread: its failure, or `nil` for a success.
    static func record(_ failure: SecItemFailureReason?) {
        let dictionary = Thread.current.threadDictionary
        if let failure {
            dictionary[key] = Box(failure)
        } else if dictionary[key] != nil {
            dictionary.removeObject(forKey: key)
        }
    }
}
