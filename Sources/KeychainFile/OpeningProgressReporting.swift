/// Where the replays of an open report the bytes they have verified: the handler ``Keychain/OpenOptions/progress``
/// gave, bound for the duration of ``Keychain/open(at:credential:options:)`` (and of `openOrCreate`'s open) as a task-local value, so that the
/// replays two layers down need no parameter of their own; `nil` (no report) for every other replay, such as
/// catching up with another process's writes.
///
/// Reports are thinned to one for each ``interval`` bytes and kept growing; ``finish()`` adds the last one,
/// `completed == total`. The replay loop reports from the opening thread only (never the threads that open a
/// record's pages), so the handler runs on the thread the open runs on, inside the open.
///
/// `@unchecked Sendable`: `reported` and `total` are only touched under `condition`'s lock.
final class OpeningProgressReporting: @unchecked Sendable {
    /// The handler of the open running on this thread or task, if it was given one.
    @TaskLocal static var current: OpeningProgressReporting?

    /// The fewest bytes between two reports.
    static let interval = 1 << 20

    private let handler: @Sendable (OpeningProgress) -> Void
    /// The last report's `completed`, and the total the replay gave.
    private var reported = -1
    private var total: Int?
    private let condition = Condition()

    private init(_ handler: @escaping @Sendable (OpeningProgress) -> Void) {
        self.handler = handler
    }

    /// Says that the bytes up to `completed` of `total` are verified: reported if at least ``interval`` bytes
    /// passed since the last report.
    static func verified(_ completed: Int, of total: Int) {
        current?.report(completed, of: total, force: false)
    }

    /// Reports that everything is verified, if a replay said how much there was and the last report said less.
    static func finish() {
        guard let current else { return }
        current.condition.lock()
        let total = current.total
        current.condition.unlock()
        if let total { current.report(total, of: total, force: true) }
    }

    private func report(_ completed: Int, of total: Int, force: Bool) {
        condition.lock()
        self.total = total
        let due = completed > reported && (force || completed - max(reported, 0) >= Self.interval)
        if due { reported = completed }
        condition.unlock()
        if due { handler(OpeningProgress(completed: completed, total: total)) }
    }

    /// Runs `operation` with `handler` bound, then reports the end if it succeeded.
    static func with<Value>(
        _ handler: (@Sendable (OpeningProgress) -> Void)?, _ operation: () throws(KeychainError) -> Value
    ) throws(KeychainError) -> Value {
        guard let handler else { return try operation() }
        let result: Result<Value, KeychainError> = $current.withValue(OpeningProgressReporting(handler)) {
            do throws(KeychainError) {
                let value = try operation()
                finish()
                return .success(value)
            } catch { return .failure(error) }
        }
        return try result.get()
    }
}
