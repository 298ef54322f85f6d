import KeychainFile

/// The progress line of opening a keychain — `kcf: verify: opening the keychain: bytes verified 1048576 of
/// 6291456 (16%)` — given to the library as ``Keychain/OpenOptions/progress``.
///
/// Drawn lazily: only once a report says part, not all, of the file is verified, which comes after the password
/// was read (the library's open runs after it) and never for a file under a mebibyte, whose open is quick. Like
/// every ``ProgressReporter``, it draws nothing when stderr is not a terminal. ``finish()`` erases it, before
/// anything else is printed. Used from the main thread only: the library calls the handler on the opening thread.
///
/// For example:
/// ```swift
/// let line = OpeningProgressLine(command: "verify")
/// defer { line.finish() }
/// options.progress = line.handler
/// ```
final class OpeningProgressLine {
    private let command: String
    private var reporter: ProgressReporter?

    /// - Parameter command: The command, as in `kcf: COMMAND: `.
    init(command: String) {
        self.command = command
    }

    /// The handler to give the open: it runs on this thread, inside the open, never after it returns.
    var handler: @Sendable (OpeningProgress) -> Void {
        nonisolated(unsafe) let line = self
        return { line.update($0) }
    }

    /// Draws `progress`, starting the line if this is the first report short of the end.
    func update(_ progress: OpeningProgress) {
        if let reporter {
            reporter.update(progress.completed, of: progress.total)
        } else if progress.completed < progress.total {
            reporter = ProgressReporter(
                command: command, activity: "opening the keychain: bytes verified", total: progress.total, completed: progress.completed)
        }
    }

    /// Erases the line, if it was drawn.
    func finish() {
        reporter?.finish()
    }
}
