/// One `kcf` command: its name, what it accepts, its help and what it does.
struct Command: Sendable {
    /// The name typed after `kcf`.
    let name: String
    /// Other names that run it (such as `security`'s name where it differs).
    var aliases: [String] = []
    /// One line for the command list.
    let summary: String
    /// Its options (the global ones are added by the runner).
    var options: [OptionSpec] = []
    /// Its positional arguments.
    var positionals: [PositionalSpec] = []
    /// Paragraphs printed after the option list in `kcf help COMMAND`.
    var details: [String] = []
    /// Runs the command and returns the process's exit status.
    let execute: @Sendable (CommandContext) throws(CommandError) -> Int32

    /// A command that exits with one of kcf's own statuses.
    init(
        name: String, aliases: [String] = [], summary: String, options: [OptionSpec] = [], positionals: [PositionalSpec] = [],
        details: [String] = [], run: @escaping @Sendable (CommandContext) throws(CommandError) -> ExitStatus
    ) {
        self.init(name: name, aliases: aliases, summary: summary, options: options, positionals: positionals, details: details,
                  runReturningStatus: { (context) throws(CommandError) in try run(context).rawValue })
    }

    /// A command whose exit status can be any number, such as `run`, which exits with its child's.
    init(
        name: String, aliases: [String] = [], summary: String, options: [OptionSpec] = [], positionals: [PositionalSpec] = [],
        details: [String] = [], runReturningStatus: @escaping @Sendable (CommandContext) throws(CommandError) -> Int32
    ) {
        self.name = name
        self.aliases = aliases
        self.summary = summary
        self.options = options
        self.positionals = positionals
        self.details = details
        self.execute = runReturningStatus
    }

    /// Every option it accepts, the global ones included.
    var allOptions: [OptionSpec] { options + OptionSpec.global }

    /// The usage text: synopsis, options, details.
    var usage: String {
        var synopsis = "usage: kcf \(name)"
        for option in options { synopsis += " [\(option.synopsis)]" }
        for positional in positionals { synopsis += " \(positional.synopsis)" }
        var lines = [synopsis, "    \(summary)"]
        if !aliases.isEmpty { lines.append("    (also: \(aliases.joined(separator: ", ")))") }
        let all = allOptions
        let width = min(28, all.map(\.synopsis.count).max() ?? 0)
        lines.append("options:")
        for option in all {
            let name = option.synopsis.padding(toLength: max(width, option.synopsis.count), withPad: " ", startingAt: 0)
            lines.append("    \(name)  \(option.help)")
        }
        for paragraph in details {
            lines.append("")
            lines.append(contentsOf: paragraph.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 })
        }
        return lines.joined(separator: "\n")
    }

    /// Checks the number of positional arguments against ``positionals``.
    func checkPositionals(_ given: [String]) throws(CommandError) {
        let required = positionals.filter { !$0.optional }.count
        let repeats = positionals.contains { $0.repeats }
        if given.count < required {
            let missing = positionals[given.count].name
            throw .usage("missing \(missing)")
        }
        if !repeats && given.count > positionals.count {
            throw .usage("unexpected argument \"\(given[positionals.count])\"")
        }
    }
}
