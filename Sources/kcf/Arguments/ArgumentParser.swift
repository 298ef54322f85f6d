/// Parses command lines in the manner of getopt(3), as `security` does, with long options and options
/// after positional arguments allowed:
///
/// - `-abc` is `-a -b -c` when they are flags; an option that takes a value takes the rest of its word
///   (`-aann`) or the next word (`-a ann`), whatever it starts with.
/// - An optional value (`-w [PASSWORD]`) is the rest of the word, or the next word only when that is `-`
///   or does not start with `-`; so `-w` at the end of the line, or before another option, has no value.
/// - `--name value` and `--name=value` for long options.
/// - `--` ends the options: every word after it is positional, even one starting with `-`.
/// - A lone `-` is positional.
enum ArgumentParser {
    /// Parses `words` against `specs`.
    ///
    /// - Parameters:
    ///   - words: The words after the command name.
    ///   - specs: The options accepted.
    ///   - stopAtPositional: Stop at the first positional word (used for global options before the
    ///     command name) and return it and what follows as `rest`.
    /// - Returns: What was parsed, and the words not parsed (when stopping at a positional).
    /// - Throws: `CommandError.usage` for an unknown option, a missing value or a value given to a flag.
    static func parse(
        _ words: [String], specs: [OptionSpec], stopAtPositional: Bool = false
    ) throws(CommandError) -> (parsed: ParsedArguments, rest: [String]) {
        var parsed = ParsedArguments()
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            if word == "--" {
                if stopAtPositional { return (parsed, Array(words[(index - 1)...])) }
                for positional in words[index...] { parsed.addPositional(positional) }
                return (parsed, [])
            } else if word.hasPrefix("--") {
                try parseLong(String(word.dropFirst(2)), words: words, index: &index, specs: specs, into: &parsed)
            } else if word.hasPrefix("-") && word.count > 1 {
                try parseShort(Array(word.dropFirst()), words: words, index: &index, specs: specs, into: &parsed)
            } else if stopAtPositional {
                return (parsed, Array(words[(index - 1)...]))
            } else {
                parsed.addPositional(word)
            }
        }
        return (parsed, [])
    }

    private static func parseLong(
        _ body: String, words: [String], index: inout Int, specs: [OptionSpec], into parsed: inout ParsedArguments
    ) throws(CommandError) {
        let name: String
        let inline: String?
        if let equals = body.firstIndex(of: "=") {
            name = String(body[..<equals])
            inline = String(body[body.index(after: equals)...])
        } else {
            name = body
            inline = nil
        }
        guard let spec = specs.first(where: { $0.long == name }) else { throw .usage("unknown option --\(name)") }
        switch spec.arity {
        case .flag:
            guard inline == nil else { throw .usage("option --\(name) takes no value") }
            parsed.add(spec.key, nil)
        case .value(let valueName):
            if let inline {
                parsed.add(spec.key, inline)
            } else {
                guard index < words.count else { throw .usage("option --\(name) needs a value (\(valueName))") }
                parsed.add(spec.key, words[index])
                index += 1
            }
        case .optionalValue:
            parsed.add(spec.key, inline ?? takeOptional(words: words, index: &index))
        }
    }

    private static func parseShort(
        _ letters: [Character], words: [String], index: inout Int, specs: [OptionSpec], into parsed: inout ParsedArguments
    ) throws(CommandError) {
        var position = 0
        while position < letters.count {
            let letter = letters[position]
            position += 1
            guard let spec = specs.first(where: { $0.short == letter }) else { throw .usage("unknown option -\(letter)") }
            let rest = position < letters.count ? String(letters[position...]) : nil
            switch spec.arity {
            case .flag:
                parsed.add(spec.key, nil)
                continue
            case .value(let valueName):
                if let rest {
                    parsed.add(spec.key, rest)
                } else {
                    guard index < words.count else { throw .usage("option -\(letter) needs a value (\(valueName))") }
                    parsed.add(spec.key, words[index])
                    index += 1
                }
            case .optionalValue:
                parsed.add(spec.key, rest ?? takeOptional(words: words, index: &index))
            }
            return
        }
    }

    /// The next word as an optional value: only `-` or a word that does not start with `-`.
    private static func takeOptional(words: [String], index: inout Int) -> String? {
        guard index < words.count else { return nil }
        let next = words[index]
        guard next == "-" || !next.hasPrefix("-") else { return nil }
        index += 1
        return next
    }
}
