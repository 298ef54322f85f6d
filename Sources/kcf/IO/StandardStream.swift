/// One of the two streams `kcf` writes: stdout for results, stderr for prompts, warnings and errors.
enum StandardStream: CaseIterable, Sendable {
    /// Results: what a command prints when it succeeds.
    case output
    /// Prompts, warnings and errors.
    case error

    /// Its file descriptor: 1 or 2.
    var descriptor: Int32 {
        switch self {
        case .output: return 1
        case .error: return 2
        }
    }

    /// Its name in messages: `stdout` or `stderr`.
    var name: String {
        switch self {
        case .output: return "stdout"
        case .error: return "stderr"
        }
    }
}
