import Foundation

/// The bash completion script `kcf completion bash` prints, generated from ``CommandTable``: command names,
/// each command's options, the values of options that take a path or one of a few words, and positional
/// arguments that are paths or command names.
///
/// It needs only bash itself (no bash-completion package): `source <(kcf completion bash)`, or the output saved
/// into a file that `~/.bashrc` sources.
enum BashCompletion {
    /// The script for `commands`.
    static func script(for commands: [Command]) -> String {
        let global = OptionSpec.global
        let globalValueWords = global.filter(\.takesValue).flatMap(\.spellings)
        var lines = [
            "# bash completion for kcf, generated from its command table by `kcf completion bash`.",
            "# Load it with:  source <(kcf completion bash)",
            "_kcf() {",
            "    local cur=${COMP_WORDS[COMP_CWORD]} prev=",
            "    (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}",
            "    local command= word i",
            "    for (( i = 1; i < COMP_CWORD; i++ )); do",
            "        word=${COMP_WORDS[i]}",
            "        case $word in",
            "            \(globalValueWords.joined(separator: "|"))) (( i++ )) ;;",
            "            -*) ;;",
            "            *) command=$word; break ;;",
            "        esac",
            "    done",
            "    local options= arguments= choices=",
            "    case $command in",
            "        '') options=\(quoted(global.flatMap(\.spellings))); arguments=command ;;",
        ]
        for command in commands {
            var setting = "options=\(quoted(command.allOptions.flatMap(\.spellings)))"
            switch command.positionals.first?.values {
            case nil, .text?: setting += "; arguments=none"
            case .file?: setting += "; arguments=file"
            case .command?: setting += "; arguments=command"
            case .choices(let words)?: setting += "; arguments=choices; choices=\(quoted(words))"
            }
            lines.append("        \(patterns(command))) \(setting) ;;")
        }
        lines += [
            "        *) return 0 ;;",
            "    esac",
            "    case $command:$prev in",
        ]
        // The value of an option that takes one, by command (`*` for the global options).
        var valueCases: [(pattern: String, kind: ValueKind)] = global.filter(\.takesValue).flatMap { option in
            option.spellings.map { ("*:\($0)", option.values) }
        }
        for command in commands {
            for option in command.options where option.takesValue {
                for name in [command.name] + command.aliases {
                    valueCases += option.spellings.map { ("\(name):\($0)", option.values) }
                }
            }
        }
        for kind in distinctKinds(valueCases.map(\.kind)) {
            let patterns = valueCases.filter { $0.kind == kind }.map(\.pattern)
            lines.append("        \(patterns.joined(separator: "|"))) \(offer(kind)); return 0 ;;")
        }
        lines += [
            "    esac",
            "    if [[ $cur == -* || $arguments == none ]]; then",
            "        COMPREPLY=( $(compgen -W \"$options\" -- \"$cur\") )",
            "        return 0",
            "    fi",
            "    case $arguments in",
            "        command) \(offer(.command)) ;;",
            "        file) \(offer(.file)) ;;",
            "        choices) COMPREPLY=( $(compgen -W \"$choices\" -- \"$cur\") ) ;;",
            "    esac",
            "    return 0",
            "}",
            "complete -F _kcf kcf",
        ]
        return lines.joined(separator: "\n")
    }

    /// The `case` patterns of a command: its name and aliases.
    private static func patterns(_ command: Command) -> String {
        ([command.name] + command.aliases).joined(separator: "|")
    }

    /// What the script does to offer values of `kind` for the word `$cur`.
    private static func offer(_ kind: ValueKind) -> String {
        switch kind {
        case .text: return "COMPREPLY=()"
        case .file: return "compopt -o filenames 2>/dev/null; local IFS=$'\\n'; COMPREPLY=( $(compgen -f -- \"$cur\") )"
        case .command: return "COMPREPLY=( $(compgen -W \(quoted(CommandTable.all.map(\.name))) -- \"$cur\") )"
        case .choices(let words): return "COMPREPLY=( $(compgen -W \(quoted(words)) -- \"$cur\") )"
        }
    }

    /// The kinds in `kinds`, each once, in the order first seen.
    private static func distinctKinds(_ kinds: [ValueKind]) -> [ValueKind] {
        var seen: [ValueKind] = []
        for kind in kinds where !seen.contains(kind) { seen.append(kind) }
        return seen
    }

    /// Words as one single-quoted shell word, separated by spaces.
    private static func quoted(_ words: [String]) -> String {
        "'" + words.joined(separator: " ").replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
