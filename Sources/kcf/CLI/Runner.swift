/// Runs one `kcf` command line: global options, the command, its options, and the exit status.
enum Runner {
    /// Runs `words` (the arguments after `kcf`) and returns the exit status. Every error is reported on
    /// stderr as `kcf: COMMAND: message`; usage errors are followed by the command's usage. Output that could
    /// not be written turns success into ``ExitStatus/outputFailed`` (see ``Output``).
    static func run(_ words: [String], environment: [String: String]) -> Int32 {
        var commandName: String?
        var status = run(words, environment: environment, commandName: &commandName)
        if DamageNotice.found && status == ExitStatus.success.rawValue { status = ExitStatus.recoveredDamage.rawValue }
        let failures = Output.finish()
        for failure in failures where failure.stream == .output {
            Output.error(prefix(commandName) + failure.description)
        }
        guard !failures.isEmpty, status == ExitStatus.success.rawValue else { return status }
        return ExitStatus.outputFailed.rawValue
    }

    private static func run(_ words: [String], environment: [String: String], commandName: inout String?) -> Int32 {
        do throws(CommandError) {
            let (global, rest) = try ArgumentParser.parse(words, specs: OptionSpec.global, stopAtPositional: true)
            var remaining = rest
            if remaining.first == "--" { remaining.removeFirst() }
            if global.has("version") {
                Output.line(HelpText.version)
                return ExitStatus.success.rawValue
            }
            guard let name = remaining.first else {
                if global.has("help") {
                    Output.line(HelpText.overview)
                    return ExitStatus.success.rawValue
                }
                Output.error(HelpText.overview)
                return ExitStatus.usage.rawValue
            }
            guard let command = CommandTable.command(named: name) else {
                throw CommandError.usage("unknown command \"\(name)\"; `kcf help` lists the commands")
            }
            commandName = command.name
            var (parsed, _) = try ArgumentParser.parse(Array(remaining.dropFirst()), specs: command.allOptions)
            parsed.merge(global)
            if parsed.has("version") {
                Output.line(HelpText.version)
                return ExitStatus.success.rawValue
            }
            if parsed.has("help") {
                Output.line(command.usage)
                return ExitStatus.success.rawValue
            }
            try command.checkPositionals(parsed.positionals)
            let context = CommandContext(
                command: command, arguments: parsed, environment: environment,
                secrets: SecretInput(environment: environment, passwordFromStdin: parsed.has("password-stdin")))
            return try command.execute(context)
        } catch {
            return report(error, commandName: commandName)
        }
    }

    private static func report(_ error: CommandError, commandName: String?) -> Int32 {
        Output.error(prefix(commandName) + error.description)
        if case .keychainWithHint(_, let hint) = error { Output.error(hint) }
        if case .usage = error {
            if let commandName, let command = CommandTable.command(named: commandName) {
                Output.error(command.usage)
            } else {
                Output.error("usage: kcf [-k PATH] [--password-stdin] COMMAND [options]   (kcf help lists the commands)")
            }
        }
        return error.status.rawValue
    }

    /// `kcf: COMMAND: `, or `kcf: ` before the command is known.
    private static func prefix(_ commandName: String?) -> String {
        commandName.map { "kcf: \($0): " } ?? "kcf: "
    }
}
