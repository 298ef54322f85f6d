import Foundation

/// The zsh completion function `kcf completion zsh` prints, generated from ``CommandTable``: commands with
/// their summaries, each command's options with their help, the values of options that take a path or one
/// of a few words, and positional arguments.
///
/// Saved as `_kcf` in a directory of `$fpath` it is autoloaded by `compinit`; `source <(kcf completion zsh)`
/// after `compinit` registers it too.
enum ZshCompletion {
    /// The script for `commands`.
    static func script(for commands: [Command]) -> String {
        var lines = [
            "#compdef kcf",
            "# zsh completion for kcf, generated from its command table by `kcf completion zsh`.",
            "# Load it with:  kcf completion zsh > ~/.zfunc/_kcf   (a directory in $fpath, before compinit)",
            "#            or:  source <(kcf completion zsh)        (after compinit)",
            "_kcf() {",
            "    local -a kcf_commands",
            "    kcf_commands=(",
        ]
        for command in commands {
            lines.append("        " + quoted(command.name + ":" + command.summary))
        }
        lines += [
            "    )",
            "    local curcontext=$curcontext state state_descr line ret=1",
            "    typeset -A opt_args",
            "    _arguments -C \\",
        ]
        lines += OptionSpec.global.map { "        " + spec($0) + " \\" }
        lines += [
            "        '1:command:->command' \\",
            "        '*::argument:->argument' && ret=0",
            "    case $state in",
            "        command) _describe -t commands 'kcf command' kcf_commands && ret=0 ;;",
            "        argument)",
            "            curcontext=${curcontext%:*:*}:kcf-$words[1]:",
            "            case $words[1] in",
        ]
        for command in commands {
            lines.append("                \(([command.name] + command.aliases).joined(separator: "|")))")
            var specs = command.allOptions.map(spec)
            for (index, positional) in command.positionals.enumerated() {
                let action = action(for: positional.values)
                let message = escaped(positional.name)
                if positional.repeats {
                    specs.append(quoted("*:\(message):") + action)
                } else {
                    specs.append(quoted("\(index + 1):\(positional.optional ? ":" : "")\(message):") + action)
                }
            }
            lines.append("                    _arguments \\")
            lines += specs.map { "                        \($0) \\" }
            lines.append("                        && ret=0 ;;")
        }
        lines += [
            "            esac ;;",
            "    esac",
            "    return ret",
            "}",
            "if [[ $funcstack[1] == _kcf ]]; then",
            "    _kcf \"$@\"",
            "else",
            "    compdef _kcf kcf",
            "fi",
        ]
        return lines.joined(separator: "\n")
    }

    /// One `_arguments` spec for `option`: its spellings as alternatives, its help, and its value.
    private static func spec(_ option: OptionSpec) -> String {
        let spellings = option.spellings
        let help = "[" + escaped(option.help, also: "") + "]"
        var value = ""
        if case .value(let name) = option.arity {
            value = quoted(":" + escaped(name) + ":") + action(for: option.values)
        }
        if spellings.count == 1 { return quoted(spellings[0] + help) + value }
        return quoted("(" + spellings.joined(separator: " ") + ")") + "{" + spellings.joined(separator: ",") + "}"
            + quoted(help) + value
    }

    /// The action that completes a value of `kind`, as a shell word.
    private static func action(for kind: ValueKind) -> String {
        switch kind {
        case .text: return quoted(" ")
        case .file: return "_files"
        case .command: return quoted("{_describe -t commands 'kcf command' kcf_commands}")
        case .choices(let words): return quoted("(" + words.map { escaped($0) }.joined(separator: " ") + ")")
        }
    }

    /// Text for inside an `_arguments` spec: backslashes, brackets, colons and `also` escaped with a backslash.
    private static func escaped(_ text: String, also: String = " ()") -> String {
        var result = ""
        for character in text {
            if "\\[]:".contains(character) || also.contains(character) { result.append("\\") }
            result.append(character)
        }
        return result
    }

    /// `text` as one single-quoted shell word.
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
