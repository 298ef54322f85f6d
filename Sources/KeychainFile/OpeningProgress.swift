/// How far opening a keychain has gone: the bytes of its log verified so far — records read, authenticated and
/// applied — out of all the log holds. Given to the handler in ``Keychain/OpenOptions/progress``.
///
/// Reports come while the records are verified, at most once for each mebibyte, with `completed` growing from
/// one report to the next; an open that succeeds ends with a report where `completed == total`. A file smaller
/// than a mebibyte gets that last report alone. Deriving the key from a password, before the records, is not
/// counted.
///
/// For example:
/// ```swift
/// var options = Keychain.OpenOptions()
/// options.progress = { progress in
///     print("\(progress.completed) of \(progress.total) bytes verified")
/// }
/// let keychain = try Keychain.open(at: path, credential: .password(password), options: options)
/// ```
public struct OpeningProgress: Sendable, Equatable, CustomStringConvertible {
    /// The bytes of the log verified so far.
    public let completed: Int
    /// The bytes of the log to verify in all.
    public let total: Int

    /// - Parameters:
    ///   - completed: The bytes verified so far.
    ///   - total: The bytes to verify in all.
    public init(completed: Int, total: Int) {
        self.completed = completed
        self.total = total
    }

    /// The share done, 0 … 1 (1 for a log with nothing to verify).
    public var fractionCompleted: Double { total == 0 ? 1 : Double(completed) / Double(total) }

    public var description: String { "\(completed) of \(total) bytes verified" }
}
