/// A shell `kcf completion` writes a completion script for.
enum Shell: String, CaseIterable {
    case bash, zsh, fish

    /// The completion script for `commands` in this shell's language.
    func completionScript(for commands: [Command]) -> String {
        switch self {
        case .bash: return BashCompletion.script(for: commands)
        case .zsh: return ZshCompletion.script(for: commands)
        case .fish: return FishCompletion.script(for: commands)
        }
    }
}
