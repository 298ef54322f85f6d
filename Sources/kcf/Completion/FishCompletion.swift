import Foundation

/// The fish completion script `kcf completion fish` prints, generated from ``CommandTable``: commands with
/// their summaries, each command's options with their help, the values of options that take a path or one
/// of a few words, and positional arguments.
///
/// Saved as `~/.config/fish/completions/kcf.fish` it is loaded when `kcf` is first completed;
/// `kcf completion fish | source` loads it at once.
enum FishCompletion {
    /// The script for `commands`.
    static func script(for commands: [Command]) -> String {
        let globalValueWords = OptionSpec.global.filter(\.takesValue).flatMap(\.spellings)
        var lines = [
            "# fish completion for kcf, generated from its command table by `kcf completion fish`.",
            "# Load it with:  kcf completion fish > ~/.config/fish/completions/kcf.fish",
            "#            or:  kcf completion fish | source",
            "",
            "# The command word: the first word after kcf that is neither an option nor a global option's value.",
            "function __kcf_command",
            "    set -l words (commandline -opc)",
            "    set -e words[1]",
            "    set -l skip 0",
            "    for word in $words",
            "        if test $skip = 1",
            "            set skip 0",
            "            continue",
            "        end",
            "        switch $word",
            "            case \(globalValueWords.joined(separator: " "))",
            "                set skip 1",
            "            case '-*'",
            "            case '*'",
            "                echo $word",
            "                return 0",
            "        end",
            "    end",
            "    return 1",
            "end",
            "",
            "# Whether the command word is one of the arguments.",
            "function __kcf_using",
            "    set -l command (__kcf_command); or return 1",
            "    contains -- $command $argv",
            "end",
            "",
            "complete -c kcf -f",
        ]
        for option in OptionSpec.global {
            lines.append("complete -c kcf" + flags(option))
        }
        for command in commands {
            lines.append("complete -c kcf -n 'not __kcf_command' -a \(quoted(command.name)) -d \(quoted(command.summary))")
        }
        for command in commands {
            lines.append("")
            let condition = " -n " + quoted("__kcf_using " + ([command.name] + command.aliases).joined(separator: " "))
            for option in command.options {
                lines.append("complete -c kcf" + condition + flags(option))
            }
            if let positional = command.positionals.first {
                switch positional.values {
                case .text: break
                case .file: lines.append("complete -c kcf" + condition + " -F")
                case .command:
                    for target in commands {
                        lines.append("complete -c kcf" + condition + " -a \(quoted(target.name)) -d \(quoted(target.summary))")
                    }
                case .choices(let words): lines.append("complete -c kcf" + condition + " -a \(quoted(words.joined(separator: " ")))")
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The `complete` flags that describe `option`: its spellings, whether it takes a value and which, its help.
    private static func flags(_ option: OptionSpec) -> String {
        var result = ""
        if let short = option.short { result += " -s \(short)" }
        if let long = option.long { result += " -l \(long)" }
        if option.takesValue {
            switch option.values {
            case .text: result += " -x"
            case .file: result += " -r -F"
            case .command: result += " -x -a \(quoted(CommandTable.all.map(\.name).joined(separator: " ")))"
            case .choices(let words): result += " -x -a \(quoted(words.joined(separator: " ")))"
            }
        }
        return result + " -d " + quoted(option.help)
    }

    /// `text` as one single-quoted fish word (fish escapes `\` and `'` inside single quotes).
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
