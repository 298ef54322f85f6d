/// The options and positional arguments of one command line, after parsing.
struct ParsedArguments {
    /// Each option given, by ``OptionSpec/key``, with its values in order (`nil` for a flag, or for an
    /// optional value that was left out).
    private(set) var options: [String: [String?]] = [:]
    /// The positional arguments, in order.
    private(set) var positionals: [String] = []

    /// Records an option.
    mutating func add(_ key: String, _ value: String?) {
        options[key, default: []].append(value)
    }

    /// Records a positional argument.
    mutating func addPositional(_ value: String) {
        positionals.append(value)
    }

    /// Adds what `other` holds (global options given before the command name).
    mutating func merge(_ other: ParsedArguments) {
        for (key, values) in other.options { options[key, default: []].insert(contentsOf: values, at: 0) }
        positionals.insert(contentsOf: other.positionals, at: 0)
    }

    /// Whether the option was given at all.
    func has(_ key: String) -> Bool { options[key] != nil }

    /// Every value given for the option, in order (none for a flag).
    func values(_ key: String) -> [String] {
        options[key]?.compactMap { $0 } ?? []
    }

    /// The last value given for the option, or `nil` (also for an optional value that was left out).
    func value(_ key: String) -> String? {
        options[key]?.last ?? nil
    }
}
