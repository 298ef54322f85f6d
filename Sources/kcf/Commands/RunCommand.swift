import KeychainFile

/// `kcf run --env NAME=SERVICE/ACCOUNT … -- COMMAND ARGS…`: runs a command with secrets in its environment, as
/// `op run` does — never in its arguments or a file.
enum RunCommand {
    static let command = Command(
        name: "run", summary: "run a command with generic passwords' secrets in its environment (like op run)",
        options: [
            OptionSpec(long: "env", .value("NAME=SERVICE/ACCOUNT"),
                       help: "set $NAME to the secret of that generic password (repeat it; the account is after the last /)"),
            OptionSpec.expectedHead,
        ],
        positionals: [PositionalSpec("COMMAND", repeats: true, values: .file)],
        details: ["""
            Finds every item first: when one is missing, says which and exits 44 without starting the command. Then
            runs COMMAND (looked up in $PATH) with kcf's environment plus the variables, without KCF_PASSWORD, and
            exits with its exit status, or 128 + the signal that ended it; 127 when COMMAND is not found, 126 when
            it cannot be run. The secrets are in the command's environment only: never in its arguments or a file
            (though any process of the same user can read a process's environment, /proc/PID/environ). While it
            runs kcf ignores SIGINT and SIGQUIT, which a terminal sends to the command too, and passes SIGTERM and
            SIGHUP on. Put -- before COMMAND so that its options are not read as kcf's. When the command reads
            stdin, give the keychain password with KCF_PASSWORD or the terminal: from stdin kcf may read past it.
            """],
        runReturningStatus: { (context) throws(CommandError) in try run(context) })

    private static func run(_ context: CommandContext) throws(CommandError) -> Int32 {
        let secrets = try context.arguments.values("env").map { (text) throws(CommandError) in try EnvironmentSecret(text) }
        guard !secrets.isEmpty else { throw .usage("give at least one --env NAME=SERVICE/ACCOUNT") }
        var seen: Set<String> = []
        for secret in secrets where !seen.insert(secret.name).inserted {
            throw .usage("--env sets \(secret.name) twice")
        }
        let values = try resolve(secrets, context)
        return try ChildProcess.run(context.arguments.positionals, setting: values, removing: [SecretInput.passwordVariable])
    }

    /// The secret of each item, in order, read before anything is started.
    private static func resolve(_ secrets: [EnvironmentSecret], _ context: CommandContext) throws(CommandError) -> [(name: String, value: [UInt8])] {
        let keychain = try context.openKeychain()
        var values: [(name: String, value: [UInt8])] = []
        for secret in secrets {
            let query = Query(.genericPassword, attributes: [.service: .string(secret.service), .account: .string(secret.account)],
                              synchronizable: .any, limit: .one)
            let results = try keychainCall { () throws(KeychainError) -> [SearchResult] in
                do throws(KeychainError) {
                    return try keychain.search(query, returning: [.data])
                } catch {
                    guard error == .itemNotFound else { throw error }
                    return []
                }
            }
            guard let value = results.first?.value else {
                throw .failure("no generic password with service \"\(secret.service)\" and account \"\(secret.account)\" for "
                    + "--env \(secret.description); the command was not started", .itemNotFound)
            }
            guard !value.contains(0) else {
                throw .failure("the secret for --env \(secret.description) holds a NUL byte, which an environment variable "
                    + "cannot; the command was not started", .invalidParameter)
            }
            values.append((secret.name, value))
        }
        return values
    }
}
