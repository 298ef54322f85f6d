/// What the value of an option or a positional argument is, for the shell completion scripts: what to offer
/// when it is being typed.
enum ValueKind: Equatable, Sendable {
    /// Free text, such as an account name: nothing is offered.
    case text
    /// A path: the shell's file names are offered.
    case file
    /// A name of a `kcf` command.
    case command
    /// One of these words.
    case choices([String])
}
