/// `kcf completion SHELL`: prints the shell completion script, generated from ``CommandTable``.
enum CompletionCommand {
    static let command = Command(
        name: "completion", summary: "print the completion script for bash, zsh or fish",
        positionals: [PositionalSpec("SHELL", values: .choices(Shell.allCases.map(\.rawValue)))],
        details: ["""
            Completes command names, each command's options, paths where a path is expected, and the words an
            option takes (such as import -t cert|priv). Load it:
                bash:  source <(kcf completion bash)            (in ~/.bashrc)
                zsh:   kcf completion zsh > DIR/_kcf            (DIR in $fpath, before compinit)
                fish:  kcf completion fish > ~/.config/fish/completions/kcf.fish
            """],
        run: { (context) throws(CommandError) in
            let name = context.arguments.positionals[0]
            guard let shell = Shell(rawValue: name) else {
                throw .usage("no completion for \"\(name)\": the shells are \(Shell.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            Output.line(shell.completionScript(for: CommandTable.all))
            return .success
        })
}
