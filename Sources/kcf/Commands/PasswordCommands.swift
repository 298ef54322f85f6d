import KeychainFile

/// `add-`, `find-` and `delete-generic-password` and the same for internet passwords: one implementation,
/// parameterised by the class and its attribute options.
enum PasswordCommands {
    /// The three commands for `itemClass` (a password class), named `PREFIX-generic-password` or
    /// `PREFIX-internet-password`.
    static func commands(for itemClass: ItemClass) -> [Command] {
        let noun = itemClass == .genericPassword ? "generic-password" : "internet-password"
        let article = itemClass == .genericPassword ? "a" : "an"
        let attributes = itemClass == .genericPassword ? PasswordAttributeOptions.generic : PasswordAttributeOptions.internet
        let specs = attributes.map(\.spec)
        return [
            Command(
                name: "add-\(noun)", summary: "add \(article) \(itemClass)",
                options: specs + [
                    OptionSpec("w", .optionalValue("PASSWORD"),
                               help: "the secret: alone (best last) to be prompted, `-w -` to read all of stdin"),
                    OptionSpec(long: "secret-stdin", help: "read the secret from stdin, to its end (same as -w -)"),
                    OptionSpec(long: "keep-newline", help: "keep a final newline of a secret read from stdin"),
                    OptionSpec("U", help: "update the item if it exists (else it must not exist)"),
                    OptionSpec.expectedHead,
                ],
                details: [addDetails],
                run: { (context) throws(CommandError) in try add(itemClass, attributes, context) }),
            Command(
                name: "find-\(noun)", summary: "find \(article) \(itemClass) and print its attributes (or its secret)",
                options: specs + [
                    OptionSpec("g", help: "also print the secret (on stderr, as security does)"),
                    OptionSpec("w", help: "print only the secret, on stdout: its bytes exactly, then a newline"),
                    OptionSpec(long: "hex", help: "with -w: print the secret as lowercase hexadecimal"),
                    OptionSpec(long: "base64", help: "with -w: print the secret as base64"),
                    OptionSpec.json("{\"keychain\", \"items\": [the item]}; with -g the item has its secret"),
                    OptionSpec.expectedHead,
                ],
                positionals: [PositionalSpec.keychain],
                details: ["""
                    Prints the first item that matches every option given; exits 44 when none does. -w writes the
                    secret's bytes exactly as stored, then one newline that is not part of it; for a secret that is
                    not text, --hex or --base64 print it in that form (then a newline). --json prints the item as
                    dump-keychain --json does (names rather than codes); with -g its secret is in the JSON, as
                    secret (when it is UTF-8 text) and secretBase64, not on stderr.
                    """],
                run: { (context) throws(CommandError) in try find(itemClass, attributes, context) }),
            Command(
                name: "delete-\(noun)", summary: "delete \(article) \(itemClass)",
                options: specs + [OptionSpec.expectedHead],
                positionals: [PositionalSpec.keychain],
                details: ["Deletes the first item that matches every option given (as security does); exits 44 when none does."],
                run: { (context) throws(CommandError) in try delete(itemClass, attributes, context) }),
        ]
    }

    private static let addDetails = """
        The secret never has to appear on the command line. With -w alone it is asked for on the terminal
        (twice), or read from stdin when stdin is not a terminal; with `-w -` or --secret-stdin it is read
        from stdin. From stdin the secret is every byte to the end of input, as bytes (several lines, NUL,
        not UTF-8: all kept), less one final newline (\\n or \\r\\n) so that `echo pw | kcf …` stores pw;
        --keep-newline keeps it. When the keychain password also comes from stdin it is the first line, and
        the secret is everything after that line. `-w SECRET` is accepted for compatibility with security
        scripts, with a warning: the command line is visible to other users (ps, /proc/PID/cmdline).
        """

    private static func add(_ itemClass: ItemClass, _ options: [AttributeOption], _ context: CommandContext) throws(CommandError) -> ExitStatus {
        let values = try AttributeOption.values(of: options, in: context)
        let attributes = try keychainCall { () throws(KeychainError) in try ItemAttributes(itemClass: itemClass, values: values) }
        let readsSecret = context.has("secret-stdin") || (context.has("w") && [nil, "-"].contains(context.value("w")))
        if context.has("keep-newline") && !readsSecret {
            throw .usage("--keep-newline keeps the final newline of a secret read from stdin: use it with --secret-stdin or -w")
        }
        let keychain = try context.openKeychain()
        let secret = try secret(context)
        let update = context.has("U")
        let query = PrimaryKeyQuery.query(for: attributes)
        let changes = values.filter { !Attribute.primaryKey(of: itemClass).contains($0.key) }
        try keychainCall { () throws(KeychainError) in
            try keychain.batch { (batch) throws(KeychainError) in
                do throws(KeychainError) {
                    try batch.add(attributes, secret: secret ?? [])
                } catch {
                    guard error == .duplicateItem, update else { throw error }
                    try batch.update(query, setting: changes, secret: secret)
                }
            }
        }
        return .success
    }

    /// The secret given with `-w`, or `nil` when `-w` was not given.
    private static func secret(_ context: CommandContext) throws(CommandError) -> [UInt8]? {
        let keepNewline = context.has("keep-newline")
        if context.has("secret-stdin") { return try context.secrets.itemSecret(fromStdin: true, keepNewline: keepNewline) }
        guard context.has("w") else { return nil }
        switch context.value("w") {
        case nil: return try context.secrets.itemSecret(fromStdin: false, keepNewline: keepNewline)
        case "-": return try context.secrets.itemSecret(fromStdin: true, keepNewline: keepNewline)
        case let given?:
            Output.error("kcf: warning: a secret given on the command line is visible to other users of this system (ps, /proc/PID/cmdline) and may be kept in shell history; use -w alone to be prompted, or `-w -` to read it from stdin")
            return Array(given.utf8)
        }
    }

    private static func find(_ itemClass: ItemClass, _ options: [AttributeOption], _ context: CommandContext) throws(CommandError) -> ExitStatus {
        let query = try matchQuery(itemClass, options, context)
        let format = try SecretFormat.chosen(in: context)
        if context.has("json") && context.has("w") {
            throw .usage("-w prints the secret alone; with --json, -g puts the secret in the JSON")
        }
        let keychain = try context.openKeychain()
        let wantsSecret = context.has("w") || context.has("g")
        let results = try keychainCall { () throws(KeychainError) in
            try keychain.search(query, returning: wantsSecret ? [.attributes, .data, .persistentReference] : [.attributes, .persistentReference])
        }
        guard let found = results.first, let attributes = found.attributes else { throw .keychain(.itemNotFound) }
        if context.has("json") {
            let secret = context.has("g") ? (found.value ?? []) : nil
            let object = ItemJSON.object(attributes: attributes, reference: found.persistentReference, secret: secret)
            Output.line(try ItemJSON.listing(keychain: keychain.path, "items", [object]))
            return .success
        }
        if context.has("w") {
            Output.bytes(format.output(found.value ?? []))
            return .success
        }
        ItemPrinter.print(keychain: keychain.path, attributes: attributes)
        if context.has("g") { Output.error(ItemPrinter.passwordLine(found.value ?? [])) }
        return .success
    }

    private static func delete(_ itemClass: ItemClass, _ options: [AttributeOption], _ context: CommandContext) throws(CommandError) -> ExitStatus {
        var query = try matchQuery(itemClass, options, context)
        let keychain = try context.openKeychain()
        let results = try keychainCall { () throws(KeychainError) in
            try keychain.search(query, returning: [.attributes, .persistentReference])
        }
        guard let found = results.first, let attributes = found.attributes, let reference = found.persistentReference else {
            throw .keychain(.itemNotFound)
        }
        query.persistentReference = reference
        try keychainCall { () throws(KeychainError) in _ = try keychain.delete(query) }
        ItemPrinter.print(keychain: keychain.path, attributes: attributes)
        Output.line("password has been deleted.")
        return .success
    }

    /// The query for the attribute options given, returning the first match, synchronised items included.
    private static func matchQuery(_ itemClass: ItemClass, _ options: [AttributeOption], _ context: CommandContext) throws(CommandError) -> Query {
        let values = try AttributeOption.values(of: options, in: context)
        let query = Query(itemClass == .genericPassword ? .genericPassword : .internetPassword, attributes: values,
                          synchronizable: .any, limit: .one)
        try keychainCall { () throws(KeychainError) in try query.validate() }
        return query
    }
}
