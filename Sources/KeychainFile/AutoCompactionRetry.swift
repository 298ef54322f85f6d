/// When a keychain tries an automatic compaction again after one failed (an unwritable directory, a full
/// disk): each failure in a row doubles the commits it lets pass before the next try, up to
/// ``maximumWait``, so that a rewrite that cannot succeed does not cost a whole new file at every commit. A
/// compaction that succeeds, automatic or asked for, starts it afresh.
///
/// For example:
/// ```swift
/// var retry = AutoCompactionRetry()
/// retry.failed(error)          // the next commit does not try
/// retry.isDue()                // false, then true at the commit after
/// ```
struct AutoCompactionRetry: Sendable {
    /// The most commits let pass between tries.
    static let maximumWait = 1_023

    /// Why the last automatic compaction failed, while none has succeeded since.
    private(set) var lastFailure: KeychainError?
    private var failuresInARow = 0
    private var commitsToPass = 0

    /// Whether a commit whose keychain is due for compaction tries it now; counts the commit if not.
    mutating func isDue() -> Bool {
        guard commitsToPass == 0 else {
            commitsToPass -= 1
            return false
        }
        return true
    }

    /// Records a failed automatic compaction: the next 1, 3, 7, … commits (at most ``maximumWait``) do not try.
    mutating func failed(_ error: KeychainError) {
        lastFailure = error
        failuresInARow = min(failuresInARow + 1, 16)
        commitsToPass = min((1 << failuresInARow) - 1, Self.maximumWait)
    }

    /// Records a compaction that succeeded.
    mutating func succeeded() {
        self = AutoCompactionRetry()
    }
}
