import KeychainFile

/// `add-credential`, `list-credentials` and `remove-credential`: the key slots of a keychain — each a password
/// (or, through the library, a raw key) that opens it.
enum CredentialCommands {
    static let addCredential = Command(
        name: "add-credential", summary: "add a password that opens the keychain too (a new key slot)",
        options: KeychainPasswordCommands.keyDerivationOptions + [
            OptionSpec(long: "groups", .value("GROUP,…"),
                       help: "reach only these access groups (format version 3; each must hold items already; \"\" for the default group)"),
            OptionSpec.expectedHead,
        ],
        positionals: [PositionalSpec.keychain],
        details: [KeychainPasswordCommands.keyDerivationDetails, """
            The keychain's password comes as for any command ($KCF_PASSWORD, stdin, or the terminal); the new
            password from stdin (the next line) or the terminal (asked twice), never from $KCF_PASSWORD. Both open
            the keychain afterwards, each in its own key slot; list-credentials shows them and remove-credential
            takes one away. The file is rewritten in a new epoch, as change-password rewrites it.
            """, """
            With --groups (a keychain of format version 3), the new password opens only the items of the access
            groups named, comma-separated: it is given those groups' keys and no other, so that whoever holds it
            cannot decrypt, count or tell apart the other groups' items. Commands run with it that name another
            group (--access-group), or that change the whole keychain, exit 30 (errSecMissingEntitlement).
            """],
        run: { (context) throws(CommandError) in try addCredential(context) })

    static let listCredentials = Command(
        name: "list-credentials", summary: "list the key slots: the credentials that open the keychain",
        options: [OptionSpec.json("an array of slots: id, kind, kdf and its parameters, access groups, grants")],
        positionals: [PositionalSpec.keychain],
        details: ["""
            One line a slot: its id (which remove-credential takes), its kind (password or raw key) and how its
            key is derived. It reads the header only and changes nothing.
            """, """
            In a keychain of format version 3, a slot also names the access groups it reaches, and a slot with
            room for 8 or fewer grants (new keys other holders gave it; at most 32, and 8,192 bytes of them)
            says so: compact the keychain with that slot's password soon, or key rotations and added groups will
            be refused for it. Every command that
            opens such a keychain warns of it on stderr.
            """],
        run: { (context) throws(CommandError) in try listCredentials(context) })

    static let removeCredential = Command(
        name: "remove-credential", summary: "remove a key slot, named by its id (list-credentials shows it)",
        options: [OptionSpec.expectedHead],
        positionals: [PositionalSpec("SLOT-ID"), PositionalSpec.keychain],
        details: ["""
            SLOT-ID is the slot's id as list-credentials prints it (32 hexadecimal digits), or the start of it when
            that names one slot only (at least 8 digits). The last slot is never removed: a keychain nothing
            opens is lost. Removing the slot of the password given to this command is allowed while another
            slot remains; that password no longer opens the keychain afterwards. The file is rewritten in a new
            epoch, as change-password rewrites it.
            """],
        run: { (context) throws(CommandError) in try removeCredential(context) })

    private static func addCredential(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let keyDerivation = try KeychainPasswordCommands.keyDerivation(context)
        let keychain = try context.openKeychain()
        let new = try context.secrets.newKeychainPassword(prompt: "new password for \(keychain.path): ", useEnvironment: false)
        let scope: CredentialScope = context.value("groups").map { .groups($0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)) } ?? .full
        let slot = try keychainCall { () throws(KeychainError) -> KeySlotInfo in
            try keychain.addCredential(.password(new), scope: scope, keyDerivation: keyDerivation)
        }
        Output.line("key slot added: \(KeySlotText.line(slot))")
        return .success
    }

    private static func listCredentials(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let keychain = try context.openKeychain()
        let slots = try keychainCall { () throws(KeychainError) -> [KeySlotInfo] in try keychain.keySlots() }
        if context.has("json") {
            Output.line(try JSONValue.array(slots.map(KeySlotText.json)).text())
        } else {
            for slot in slots { Output.line(KeySlotText.line(slot)) }
        }
        return .success
    }

    private static func removeCredential(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let given = context.arguments.positionals[0].lowercased()
        guard given.count >= 8, given.count <= 32, given.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw .usage("a slot id is 8 to 32 hexadecimal digits (list-credentials prints them), not \"\(given)\"")
        }
        let keychain = try context.openKeychain()
        let slots = try keychainCall { () throws(KeychainError) -> [KeySlotInfo] in try keychain.keySlots() }
        let matching = slots.filter { Hex.lower($0.id).hasPrefix(given) }
        guard let slot = matching.first else {
            throw .keychainWithHint(.itemNotFound, hint: "kcf: remove-credential: no key slot has an id starting \(given)")
        }
        guard matching.count == 1 else {
            throw .failed("\(matching.count) key slots have an id starting \(given): give more of it")
        }
        try keychainCall { () throws(KeychainError) in try keychain.removeKeySlot(id: slot.id) }
        Output.line("key slot removed: \(KeySlotText.line(slot))")
        return .success
    }
}
