/// Where the file writers of rewrites, salvage and repair report the items they have written: the handler a
/// public operation was given (``Keychain/compact(progress:)``), bound for the duration of the call as a
/// task-local value, so that the writers two layers down need no parameter of their own; `nil` (no report)
/// for every other call. The handler runs on the calling thread, inside the operation (with the keychain's lock
/// held): it must not call back into the keychain.
final class ProgressReporting: Sendable {
    /// The handler of the operation running on this thread or task, if it was given one.
    @TaskLocal static var current: ProgressReporting?

    private let handler: @Sendable (OperationProgress) -> Void

    private init(_ handler: @escaping @Sendable (OperationProgress) -> Void) {
        self.handler = handler
    }

    /// Reports that `completed` of `total` items are written. Writers call it once for each record they write
    /// (about every 4,096 items), and once at the end.
    static func itemsWritten(_ completed: Int, of total: Int) {
        current?.handler(OperationProgress(completed: completed, total: total))
    }

    /// Runs `operation` with `handler` bound.
    static func with<Value>(
        _ handler: @escaping @Sendable (OperationProgress) -> Void, _ operation: () throws(KeychainError) -> Value
    ) throws(KeychainError) -> Value {
        let result: Result<Value, KeychainError> = $current.withValue(ProgressReporting(handler)) {
            do throws(KeychainError) { return .success(try operation()) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
