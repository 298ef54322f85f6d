/// How far a long operation — a compaction, an upgrade, a salvage or a repair — has gone: the items written to
/// the new file so far, out of all it will hold. Given to the `progress` handler of those operations.
///
/// For example:
/// ```swift
/// try keychain.compact { progress in
///     print("\(progress.completed) of \(progress.total) items written")
/// }
/// ```
public struct OperationProgress: Sendable, Equatable, CustomStringConvertible {
    /// The items written to the new file so far.
    public let completed: Int
    /// The items the new file will hold.
    public let total: Int

    /// - Parameters:
    ///   - completed: The items written so far.
    ///   - total: The items the operation writes in all.
    public init(completed: Int, total: Int) {
        self.completed = completed
        self.total = total
    }

    /// The share done, 0 … 1 (1 for an operation with nothing to write).
    public var fractionCompleted: Double { total == 0 ? 1 : Double(completed) / Double(total) }

    public var description: String { "\(completed) of \(total) items written" }
}
