import KeychainFile

/// `create-keychain` and `change-password`: the commands that set a keychain's password.
enum KeychainPasswordCommands {
    /// The options that choose how a new password's key is derived: the KDF and its cost.
    static let keyDerivationOptions = [
        OptionSpec(long: "kdf", .value("KDF"), values: .choices(["argon2id", "pbkdf2"]),
                   help: "the password's KDF: argon2id (64 MiB, 3 passes, 4 lanes) or pbkdf2 (default: argon2id; pbkdf2 for a version 1 file)"),
        OptionSpec(long: "iterations", .value("N"), help: "PBKDF2 rounds, 210,000 … 10,000,000 (default 600,000); implies --kdf pbkdf2"),
        OptionSpec(long: "insecure-iterations", .value("N"),
                   help: "PBKDF2 rounds below the minimum: INSECURE, cheap to guess; for tests and demos only"),
        OptionSpec(long: "insecure-argon2id", .value("KIB"),
                   help: "Argon2id with KIB KiB (8 … 1,048,576), 1 pass, 1 lane: INSECURE, cheap to guess; for tests only"),
    ]

    private static let passwordDetails = """
        Passwords are never taken from the command line. The new password is read from $KCF_PASSWORD (for
        create-keychain only), else one line of stdin when stdin is not a terminal or --password-stdin is
        given, else asked twice on the terminal without echo.
        """

    static let keyDerivationDetails = """
        The new password's key is derived with Argon2id at 64 MiB, 3 passes and 4 lanes (RFC 9106's second
        recommended option) unless --kdf pbkdf2, --iterations or --insecure-iterations chooses PBKDF2-HMAC-SHA256
        (600,000 rounds unless said). A file of format version 1 holds only PBKDF2 password slots: its default is
        PBKDF2 at 600,000 rounds, and --kdf argon2id is refused there.
        """

    /// The option that chooses the format version of a new file.
    private static let formatVersionOption = OptionSpec(
        long: "format-version", .value("N"), values: .choices(["1", "2", "3"]),
        help: "the file's format version: 1, 2 or 3 (default: the library's, for new keychains)")

    static let createKeychain = Command(
        name: "create-keychain", summary: "create a new, empty keychain file",
        options: keyDerivationOptions + [formatVersionOption],
        positionals: [PositionalSpec.keychain],
        details: [passwordDetails, keyDerivationDetails, """
            Missing directories above the file are created with mode 0700; the file gets 0600. --format-version 1
            writes a file that readers knowing only version 1 can open too; its first rewrite makes it version 2
            unless $KCF_KEEP_FORMAT_VERSION=1 (see "format versions" in kcf help). --format-version 3 seals each
            access group under a key of its own, so that add-credential --groups can give a password that reaches
            only some groups (SPEC.md §30); nothing rewrites a version 2 file as version 3.
            """],
        run: { (context) throws(CommandError) in try createKeychain(context) })

    /// `change-password --keep-keys`: the key slot alone, the master key kept.
    private static let keepKeysOption = OptionSpec(
        long: "keep-keys",
        help: "replace the password's key slot alone, keeping the master key: an old copy of the file with the old password still reads everything")

    static let changePassword = Command(
        name: "change-password", aliases: ["set-keychain-password"], summary: "change the keychain's password",
        options: keyDerivationOptions + [keepKeysOption, OptionSpec.expectedHead],
        positionals: [PositionalSpec.keychain],
        details: [keyDerivationDetails, """
            The old password comes as for any command ($KCF_PASSWORD, stdin, or the terminal); the new one from
            stdin (the next line) or the terminal (asked twice), never from $KCF_PASSWORD. The file is rewritten
            in a new epoch (SPEC.md §15.2): after a crash either the old or the new password opens it. A file of
            format version 1 is rewritten as version 2, unless $KCF_KEEP_FORMAT_VERSION=1.
            """, """
            The keychain gets a new master key and every item is sealed anew, so that an old copy of the file (a
            backup, a synced or stolen copy) with the old password reads nothing added after the change; other
            processes that opened the keychain with the old password can no longer read it. In format versions 1
            and 2 the new key can be given only to the new password: a keychain with other credentials
            (add-credential) is refused, and left as it was, unless --keep-keys is given. Either run change-password
            --keep-keys, or remove the other credentials (list-credentials, remove-credential ID), change the
            password, and add them again (add-credential adds passwords; a raw-key credential only the library can
            add again). In format version 3 every other credential is given the new keys; a password that reaches
            only some access groups (add-credential --groups) cannot give them, and is refused unless --keep-keys
            is given.
            --keep-keys replaces the password's key slot alone and keeps the master key: cheaper, and the other
            credentials stay, but it does not protect against an old copy of the file and the old password, which
            still open everything written after the change. Either way the file is rewritten beside itself: a keychain
            that cannot be written (its file, lock file, directory or mount read-only) is refused first, before the
            new password is asked for, with exit status 195.
            """],
        run: { (context) throws(CommandError) in try changePassword(context) })

    private static func createKeychain(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let path = try context.keychainPath()
        guard !KeychainLocation.exists(path) else { throw .failed("a file already exists at \(path)") }
        let keyDerivation = try keyDerivation(context)
        var options = Keychain.CreationOptions(passwordKeyDerivation: keyDerivation)
        if let text = context.value("format-version") {
            guard let version = Int(text), (1...3).contains(version) else {
                throw .usage("--format-version takes 1, 2 or 3")
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
        let keyDerivation = try keyDerivation(context)
        let keepKeys = context.has("keep-keys")
        let (keychain, old) = try context.openKeychainKeepingPassword()
        // A keychain that cannot be written is said so first, before the new password is asked for and before the
        // other credentials are counted: neither change could write it (both rewrite the file beside it), so advice
        // to use --keep-keys would only lead to a second failure.
        try keychainCall { () throws(KeychainError) in try keychain.checkWritable(rewriting: true) }
        // Format version 3 gives the new keys to every other credential by a grant; versions 1 and 2 cannot.
        let grantsKeys = keychain.fileFormatVersion >= 3
        if !keepKeys {
            // Refused before the new password is asked for; the library refuses too, if a slot is added meanwhile.
            if keychain.scope != .full { throw .failed(scopedRefusal) }
            let others = try keychainCall { () throws(KeychainError) in try keychain.keySlots().count } - 1
            if others > 0, !grantsKeys { throw .failed(otherCredentialsRefusal(others)) }
        }
        let new = try context.secrets.newKeychainPassword(prompt: "new password for \(keychain.path): ", useEnvironment: false)
        if !keepKeys, !grantsKeys, let others = try? keychain.keySlots().count - 1, others > 0 {
            // A credential was added since the check above: refuse as it does, not with the library's wording.
            throw .failed(otherCredentialsRefusal(others))
        }
        try keychainCall { () throws(KeychainError) in
            if keepKeys {
                try keychain.changePasswordKeepingKeys(from: old, to: new, keyDerivation: keyDerivation)
            } else {
                try keychain.changePassword(from: old, to: new, keyDerivation: keyDerivation)
            }
        }
        Output.line("password changed for \(SecurityText.quoted(Array(keychain.path.utf8)))")
        return .success
    }

    /// Why change-password without --keep-keys refuses a password scoped to access groups: it cannot give new keys
    /// to the other credentials.
    private static let scopedRefusal =
        "this password reaches only some access groups, so it cannot give new keys to the keychain's other credentials; "
        + "nothing was changed. Run change-password --keep-keys to replace this password's key slot alone (a copy of the "
        + "file kept from before, with the old password, still reads what its groups held until the keys are renewed), "
        + "and change-password with a password that reaches the whole keychain to renew every key"

    /// Why change-password without --keep-keys refuses a keychain with `others` credentials besides the password,
    /// and the two ways out.
    private static func otherCredentialsRefusal(_ others: Int) -> String {
        let credentials = others == 1 ? "1 other credential (key slot)" : "\(others) other credentials (key slots)"
        return "this keychain has \(credentials) besides this password. change-password gives the keychain a new master key, "
            + "which only the new password could open: \(others == 1 ? "that credential" : "those credentials") would be locked out, "
            + "so nothing was changed. Either run change-password --keep-keys, which replaces this password's key slot alone "
            + "(the master key stays, so an old copy of the file with the old password still reads what is added later), or "
            + "remove the other credentials (kcf list-credentials, kcf remove-credential ID), change the password, and add them "
            + "again (kcf add-credential; kcf adds passwords only, so a raw-key credential can be added again only through "
            + "the library: for a keychain with one, use --keep-keys)"
    }

    /// How the options ask the new password's key to be derived: `--kdf`, or the cost options that imply one;
    /// the library's default (Argon2id, or PBKDF2 in a version 1 file) without them.
    static func keyDerivation(_ context: CommandContext) throws(CommandError) -> PasswordKeyDerivation {
        let kdf = context.value("kdf")
        if let kdf, kdf != "argon2id", kdf != "pbkdf2" {
            throw .usage("--kdf takes argon2id or pbkdf2, not \"\(kdf)\"")
        }
        let choosesPBKDF2 = context.value("iterations") != nil || context.value("insecure-iterations") != nil
        if let text = context.value("insecure-argon2id") {
            guard kdf != "pbkdf2", !choosesPBKDF2 else {
                throw .usage("--insecure-argon2id chooses Argon2id: it cannot go with --kdf pbkdf2, --iterations or --insecure-iterations")
            }
            guard let memoryKiB = UInt32(text), memoryKiB >= 8,
                  memoryKiB <= PasswordKeyDerivation.maximumArgon2idMemoryKiB else {
                throw .usage("--insecure-argon2id takes a number of KiB from 8 to \(PasswordKeyDerivation.maximumArgon2idMemoryKiB)")
            }
            Output.error("kcf: warning: Argon2id with \(memoryKiB) KiB and 1 pass makes the password cheap to guess; use this for tests only")
            return try keychainCall { () throws(KeychainError) in
                try PasswordKeyDerivation.insecureForTesting(argon2idMemoryKiB: memoryKiB, passes: 1, lanes: 1)
            }
        }
        if choosesPBKDF2 {
            guard kdf != "argon2id" else {
                throw .usage("--iterations and --insecure-iterations are PBKDF2's: they cannot go with --kdf argon2id")
            }
            return .pbkdf2(try iterations(context))
        }
        switch kdf {
        case "argon2id": return .recommendedArgon2id
        case "pbkdf2": return .pbkdf2(.standard)
        default: return .standard
        }
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
