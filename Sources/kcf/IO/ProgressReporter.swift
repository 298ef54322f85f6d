#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import KeychainFile

/// One line on stderr that says how far a long operation is — `kcf: import: decrypting 120 of 800 (15%)` —
/// redrawn in place (a carriage return, then the line) when stderr is a terminal, and nothing at all when it
/// is not (a pipe, a file, /dev/null), so that logs and scripts see only what they saw before.
///
/// The line is drawn when the reporter is made, then at most every tenth of a second, and erased (overwritten
/// with spaces) by ``finish()``, before anything else is printed: the operation's own output and messages
/// are never mixed with it. Spaces rather than an escape sequence, so that a terminal without them is not
/// garbled. Used from the main thread only, as ``Output``.
///
/// For example:
/// ```swift
/// let progress = ProgressReporter(command: "import", activity: "decrypting", total: entries.count)
/// defer { progress.finish() }
/// for (done, entry) in entries.enumerated() { progress.update(done); … }
/// ```
final class ProgressReporter {
    private let prefix: String
    private var total: Int?
    private let isShown: Bool
    private var drawnWidth = 0
    private var lastDrawn: UInt64 = 0

    /// Starts the line.
    ///
    /// - Parameters:
    ///   - command: The command, as in `kcf: COMMAND: `.
    ///   - activity: What is being done, such as "decrypting" or "compacting 1,200 items".
    ///   - total: How many steps there are, or `nil` when only the activity is shown.
    ///   - completed: How many of them are already done.
    ///   - isShown: Whether to draw at all; by default, whether stderr is a terminal.
    init(command: String, activity: String, total: Int? = nil, completed: Int = 0, isShown: Bool = ProgressReporter.stderrIsTerminal) {
        self.prefix = "kcf: \(command): \(activity)"
        self.total = total
        self.isShown = isShown
        draw(total == nil ? prefix + "…" : text(completed))
    }

    /// Runs `body` with a line that says `activity`, erased when `body` returns or throws: for one long call
    /// that reports no steps of its own, such as a compaction.
    static func showing<Result>(
        command: String, activity: String, _ body: () throws(CommandError) -> Result
    ) throws(CommandError) -> Result {
        let progress = ProgressReporter(command: command, activity: activity)
        defer { progress.finish() }
        return try body()
    }

    /// Runs `body` with a line that says `activity`, erased when `body` returns or throws, and that counts the
    /// items written once the library reports them through the handler `body` is given (a compaction, an
    /// upgrade, a salvage or a repair: ``OperationProgress``). The library calls the handler on this thread,
    /// inside `body`.
    static func showingItems<Result>(
        command: String, activity: String,
        _ body: (_ handler: @escaping @Sendable (OperationProgress) -> Void) throws(CommandError) -> Result
    ) throws(CommandError) -> Result {
        let progress = ProgressReporter(command: command, activity: activity)
        defer { progress.finish() }
        // The handler runs on this thread while `body` runs (the library's contract), never after it returns.
        nonisolated(unsafe) let reporter = progress
        return try body { reporter.update($0.completed, of: $0.total) }
    }

    /// Whether stderr is a terminal (and was open when kcf started).
    static var stderrIsTerminal: Bool { isatty(StandardStream.error.descriptor) == 1 }

    /// Says that `completed` of the steps are done.
    func update(_ completed: Int) {
        guard isShown, total != nil else { return }
        let now = Self.milliseconds()
        guard now &- lastDrawn >= 100 else { return }
        draw(text(completed))
    }

    /// Says that `completed` of `total` steps are done, where the total became known only now.
    func update(_ completed: Int, of total: Int) {
        self.total = total
        update(completed)
    }

    /// Erases the line.
    func finish() {
        guard isShown, drawnWidth > 0 else { return }
        Output.progress("\r" + String(repeating: " ", count: drawnWidth) + "\r")
        drawnWidth = 0
    }

    deinit { finish() }

    private func text(_ completed: Int) -> String {
        guard let total, total > 0 else { return prefix }
        return "\(prefix) \(completed) of \(total) (\(completed * 100 / total)%)"
    }

    private func draw(_ line: String) {
        guard isShown else { return }
        let width = line.count
        let padding = max(0, drawnWidth - width)
        Output.progress("\r" + line + String(repeating: " ", count: padding))
        drawnWidth = max(width, drawnWidth)
        lastDrawn = Self.milliseconds()
    }

    /// A monotonic clock in milliseconds.
    private static func milliseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1000 &+ UInt64(time.tv_nsec / 1_000_000)
    }
}
