import KeychainFile

/// `create-keychain` and `change-password`: the commands that set a keychain's password.
enum KeychainPasswordCommands {
    /// The options that choose the PBKDF2 cost of a new password.
    private static let iterationOptions = [
        OptionSpec(long: "iterations", .value("N"), help: "PBKDF2 rounds, 210,000 … 10,000,000 (default 600,000)"),
        OptionSpec(long: "insecure-iterations", .value("N"),
                   help: "PBKDF2 rounds below the minimum: INSECURE, cheap to guess; for tests and demos only"),
    ]

    private static let passwordDetails = """
        Passwords are never taken from the command line. The new password is read from $KCF_PASSWORD (for
        create-keychain only), else one line of stdin when stdin is not a terminal or --password-stdin is
        given, else asked twice on the terminal without echo.
        """

    /// The option that chooses the format version of a new file.
    private static let formatVersionOption = OptionSpec(
        long: "format-version", .value("N"), values: .choices(["1", "2"]),
        help: "the file's format version: 1 or 2 (default: the library's, for new keychains)")

    static let createKeychain = Command(
        name: "create-keychain", summary: "create a new, empty keychain file",
        options: iterationOptions + [formatVersionOption],
        positionals: [PositionalSpec.keychain],
        details: [passwordDetails, """
            Missing directories above the file are created with mode 0700; the file gets 0600. --format-version 1
            writes a file that readers knowing only version 1 can open too; its first rewrite makes it version 2
            unless $KCF_KEEP_FORMAT_VERSION=1 (see "format versions" in kcf help).
            """],
        run: { (context) throws(CommandError) in try createKeychain(context) })

    static let changePassword = Command(
        name: "change-password", aliases: ["set-keychain-password"], summary: "change the keychain's password",
        options: iterationOptions + [OptionSpec.expectedHead],
        positionals: [PositionalSpec.keychain],
        details: ["""
            The old password comes as for any command ($KCF_PASSWORD, stdin, or the terminal); the new one from
            stdin (the next line) or the terminal (asked twice), never from $KCF_PASSWORD. The file is rewritten
            in a new epoch (SPEC.md §15.2): after a crash either the old or the new password opens it. A file of
            format version 1 is rewritten as version 2, unless $KCF_KEEP_FORMAT_VERSION=1.
            """],
        run: { (context) throws(CommandError) in try changePassword(context) })

    private static func createKeychain(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let path = try context.keychainPath()
        guard !KeychainLocation.exists(path) else { throw .failed("a file already exists at \(path)") }
        let iterations = try iterations(context)
        var options = Keychain.CreationOptions(passwordIterations: iterations)
        if let text = context.value("format-version") {
            guard let version = Int(text), version == 1 || version == 2 else {
                throw .usage("--format-version takes 1 or 2")
            }
            options.formatVersion = version
        }
        let password = try context.secrets.newKeychainPassword(prompt: "password for new keychain: ", useEnvironment: true)
        try KeychainLocation.createParentDirectories(of: path)
        _ = try keychainCall { () throws(KeychainError) in
            try Keychain.create(at: path, credential: .password(password), options: options)
        }
        Output.line("created keychain \(SecurityText.quoted(Array(path.utf8)))")
        return .success
    }

    private static func changePassword(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let iterations = try iterations(context)
        let (keychain, old) = try context.openKeychainKeepingPassword()
        let new = try context.secrets.newKeychainPassword(prompt: "new password for \(keychain.path): ", useEnvironment: false)
        try keychainCall { () throws(KeychainError) in
            try keychain.changePassword(from: old, to: new, iterations: iterations)
        }
        Output.line("password changed for \(SecurityText.quoted(Array(keychain.path.utf8)))")
        return .success
    }

    /// The PBKDF2 cost the options ask for.
    private static func iterations(_ context: CommandContext) throws(CommandError) -> PasswordIterations {
        if let text = context.value("insecure-iterations") {
            guard let count = UInt32(text), count >= 1 else { throw .usage("--insecure-iterations takes a positive number") }
            Output.error("kcf: warning: \(count) PBKDF2 iterations make the password cheap to guess; use this for tests and demos only")
            return .insecureForTesting(count)
        }
        if let text = context.value("iterations") {
            guard let count = UInt32(text) else { throw .usage("--iterations takes a number") }
            return try keychainCall { () throws(KeychainError) in try PasswordIterations.custom(count) }
        }
        return .standard
    }
}
