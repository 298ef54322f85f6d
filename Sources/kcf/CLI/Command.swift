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
    /// Runs the command.
    let run: @Sendable (CommandContext) throws(CommandError) -> ExitStatus

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
