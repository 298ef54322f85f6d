/// One option a command accepts.
struct OptionSpec: Sendable {
    /// The one-letter form, used as `-x`.
    let short: Character?
    /// The long form, used as `--name` or `--name=value`.
    let long: String?
    /// Whether and how it takes a value.
    let arity: OptionArity
    /// What its value is, for shell completion.
    let values: ValueKind
    /// One line of help.
    let help: String

    /// The name options are looked up by: the long form when there is one, else the letter.
    var key: String { long ?? short.map(String.init) ?? "" }

    /// - Parameters:
    ///   - short: The one-letter form.
    ///   - long: The long form, without dashes.
    ///   - arity: Whether and how it takes a value.
    ///   - values: What its value is, for shell completion (free text unless said).
    ///   - help: One line of help.
    init(_ short: Character? = nil, long: String? = nil, _ arity: OptionArity = .flag, values: ValueKind = .text, help: String) {
        self.short = short
        self.long = long
        self.arity = arity
        self.values = values
        self.help = help
    }

    /// How it is typed: `-x`, `--name`, or both.
    var spellings: [String] {
        [short.map { "-\($0)" }, long.map { "--\($0)" }].compactMap { $0 }
    }

    /// Whether it needs a value (the next word, when not in the same word). An optional value such as
    /// `-w [PASSWORD]` does not count: the word after it is completed as any other.
    var takesValue: Bool {
        if case .value = arity { return true }
        return false
    }

    /// How the option is written in usage text: `-a ACCOUNT`, `--json`, `-w [PASSWORD]`.
    var synopsis: String {
        let names = spellings.joined(separator: "|")
        switch arity {
        case .flag: return names
        case .value(let name): return "\(names) \(name)"
        case .optionalValue(let name): return "\(names) [\(name)]"
        }
    }

    /// `--expected-head HEAD`, for the commands that open an existing keychain: refuse a file rolled back to an
    /// older copy (SPEC.md §15.4).
    static let expectedHead = OptionSpec(
        long: "expected-head", .value("HEAD"),
        help: "refuse the keychain unless it contains HEAD (epoch.sequence.chain, and /group parts for version 3, as verify prints it); 32 if rolled back")

    /// `--json`: print JSON (``ItemJSON``) instead of `security`'s text.
    static func json(_ shape: String) -> OptionSpec {
        OptionSpec(long: "json", help: "print JSON: " + shape)
    }

    /// The options every command accepts (also before the command name).
    static let global: [OptionSpec] = [
        OptionSpec("k", long: "keychain", .value("PATH"), values: .file,
                   help: "the keychain file (default: $KCF_KEYCHAIN, else the per-user default)"),
        OptionSpec(long: "password-stdin",
                   help: "read the keychain password from the first line of stdin, even from a terminal"),
        OptionSpec(long: "recover",
                   help: "read a damaged keychain: every item that still authenticates, read-only; what is lost is listed on stderr (exit 5)"),
        OptionSpec("h", long: "help", help: "print this command's usage"),
        OptionSpec(long: "version", help: "print kcf's version: the keychain format version it writes"),
    ]
}
