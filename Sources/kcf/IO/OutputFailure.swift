/// A write to stdout or stderr that failed: the stream and why, in words.
struct OutputFailure: Sendable, CustomStringConvertible {
    /// The stream that could not be written.
    let stream: StandardStream
    /// Why, such as "No space left on device (errno 28)".
    let reason: String

    /// The message `kcf` prints on stderr, after `kcf: COMMAND: `.
    var description: String {
        "cannot write to \(stream.name): \(reason); what was printed there is incomplete"
    }
}
