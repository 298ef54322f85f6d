/// A positional argument of a command.
struct PositionalSpec: Sendable {
    /// Its name in usage text, such as `FILE`.
    let name: String
    /// Whether it may be left out.
    let optional: Bool
    /// Whether it may be repeated.
    let repeats: Bool

    init(_ name: String, optional: Bool = false, repeats: Bool = false) {
        self.name = name
        self.optional = optional
        self.repeats = repeats
    }

    /// How it is written in usage text.
    var synopsis: String {
        let base = repeats ? "\(name)..." : name
        return optional ? "[\(base)]" : base
    }
}
