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

    /// The variable that, set to `1`, keeps a version 1 keychain version 1 through rewrites (`keepsFormatVersion`).
    static let keepFormatVersionVariable = "KCF_KEEP_FORMAT_VERSION"

    /// The variable that sets, in MiB (1 … 4,096), the most memory a key slot's Argon2id may ask for before an
    /// open refuses it (`OpenOptions.keyDerivationMemoryLimit`; 1,024 when unset).
    static let keyDerivationMemoryVariable = "KCF_KDF_MEMORY_LIMIT"

    /// `$KCF_KDF_MEMORY_LIMIT` in bytes, or the library's default when it is unset.
    ///
    /// - Throws: `CommandError.usage` when it is not a whole number of MiB from 1 to 4,096.
    func keyDerivationMemoryLimit() throws(CommandError) -> Int {
        guard let text = environment[Self.keyDerivationMemoryVariable] else { return Keychain.OpenOptions().keyDerivationMemoryLimit }
        guard let mebibytes = Int(text), (1...4_096).contains(mebibytes) else {
            throw .usage("$\(Self.keyDerivationMemoryVariable) must be a whole number of MiB from 1 to 4096, not \"\(text)\"")
        }
        return mebibytes << 20
    }

    /// Opens the keychain, asking for its password, and checks it contains the `--expected-head` if given.
    ///
    /// - Throws: `CommandError` with status `.io` when there is no file (before asking for a password);
    ///   `.usage` for a malformed `--expected-head`; what opening throws (`.wrongPassword`, `.rolledBack`, …).
    func openKeychain() throws(CommandError) -> Keychain {
        try openKeychainKeepingPassword().keychain
    }

    /// Opens the keychain as ``openKeychain()`` does, and returns the password it was opened with.
    func openKeychainKeepingPassword() throws(CommandError) -> (keychain: Keychain, password: String) {
        let path = try existingKeychainPath()
        var options = Keychain.OpenOptions(
            expectedHead: try expectedHead(), recover: arguments.has("recover"),
            keepsFormatVersion: environment[Self.keepFormatVersionVariable] == "1",
            keyDerivationMemoryLimit: try keyDerivationMemoryLimit())
        let password = try secrets.keychainPassword(for: path)
        // A large file's open shows how far it is, on a terminal (after the password: the open runs after it).
        let progress = OpeningProgressLine(command: command.name)
        defer { progress.finish() }
        options.progress = progress.handler
        let keychain: Keychain
        do throws(KeychainError) {
            keychain = try Keychain.open(at: path, credential: .password(password), options: options)
            progress.finish()
        } catch {
            progress.finish()
            if case .corrupted = error, !options.recover {
                DamageNotice.suggestRecovery(command: command.name)
            }
            if case .rolledBack = error, options.expectedHead == nil {
                DamageNotice.explainRollback(command: command.name, lockFile: path + ".lock")
            }
            throw .keychain(error)
        }
        try DamageNotice.report(keychain, command: command.name)
        GrantLimitNotice.report(keychain, command: command.name)
        return (keychain, password)
    }

    /// The head given with `--expected-head`, or `nil` when the option was not given.
    ///
    /// - Throws: `CommandError.usage` saying what is wrong with a malformed head (never `nil` for one: a pin
    ///   that cannot be read must not switch the rollback check off).
    func expectedHead() throws(CommandError) -> Head? {
        guard arguments.has("expected-head") else { return nil }
        do throws(KeychainError) {
            return try Head(arguments.value("expected-head") ?? "")
        } catch {
            guard case .invalidParameter(let reason) = error else { throw .keychain(error) }
            throw .usage("--expected-head: \(reason)")
        }
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
