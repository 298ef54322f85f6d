/// A positional argument of a command.
struct PositionalSpec: Sendable {
    /// Its name in usage text, such as `FILE`.
    let name: String
    /// Whether it may be left out.
    let optional: Bool
    /// Whether it may be repeated.
    let repeats: Bool
    /// What it is, for shell completion.
    let values: ValueKind

    /// - Parameters:
    ///   - name: Its name in usage text; `keychain` is the keychain's path (see ``CommandContext/keychainPath()``).
    ///   - optional: Whether it may be left out.
    ///   - repeats: Whether it may be repeated.
    ///   - values: What it is, for shell completion (free text unless said).
    init(_ name: String, optional: Bool = false, repeats: Bool = false, values: ValueKind = .text) {
        self.name = name
        self.optional = optional
        self.repeats = repeats
        self.values = values
    }

    /// The optional `[keychain]` argument of the commands that take the keychain's path last, as security's do.
    static let keychain = PositionalSpec("keychain", optional: true, values: .file)

    /// How it is written in usage text.
    var synopsis: String {
        let base = repeats ? "\(name)..." : name
        return optional ? "[\(base)]" : base
    }
}
