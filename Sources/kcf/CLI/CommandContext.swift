import KeychainFile

/// What a running command gets: its parsed arguments, the environment, secret input, and the keychain.
struct CommandContext {
    /// The command being run.
    let command: Command
    /// Its options and positional arguments (global options included).
    let arguments: ParsedArguments
    /// The process environment.
    let environment: [String: String]
    /// Where secrets come from.
    let secrets: SecretInput

    /// The keychain path: `-k`/`--keychain`, else the positional argument named `keychain`, else
    /// `$KCF_KEYCHAIN`, else the per-user default.
    func keychainPath() throws(CommandError) -> String {
        let positional = command.positionals.firstIndex { $0.name == "keychain" }.flatMap {
            $0 < arguments.positionals.count ? arguments.positionals[$0] : nil
        }
        return try KeychainLocation.path(explicit: arguments.value("keychain") ?? positional, environment: environment)
    }

    /// Opens the keychain, asking for its password.
    ///
    /// - Throws: `CommandError` with status `.io` when there is no file (before asking for a password);
    ///   what opening throws (`.wrongPassword`, `.corrupted`, …).
    func openKeychain() throws(CommandError) -> Keychain {
        try openKeychainKeepingPassword().keychain
    }

    /// Opens the keychain as ``openKeychain()`` does, and returns the password it was opened with.
    func openKeychainKeepingPassword() throws(CommandError) -> (keychain: Keychain, password: String) {
        let path = try existingKeychainPath()
        let password = try secrets.keychainPassword(for: path)
        let keychain = try keychainCall { () throws(KeychainError) in
            try Keychain.open(at: path, credential: .password(password))
        }
        return (keychain, password)
    }

    /// The keychain path, checked to exist.
    ///
    /// - Throws: `CommandError` with status `.io` when nothing is there.
    func existingKeychainPath() throws(CommandError) -> String {
        let path = try keychainPath()
        guard KeychainLocation.exists(path) else {
            throw .failure("no keychain at \(path) (create one with `kcf create-keychain`)", .io)
        }
        return path
    }

    /// The value of an option, or `nil`.
    func value(_ key: String) -> String? { arguments.value(key) }

    /// Whether an option was given.
    func has(_ key: String) -> Bool { arguments.has(key) }
}
