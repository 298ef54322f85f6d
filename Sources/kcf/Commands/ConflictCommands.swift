import KeychainFile

/// `kcf conflicts` and `kcf resolve`: the conflict copies a merge kept (SPEC.md §43.4).
enum ConflictCommands {
    static let conflicts = Command(
        name: "conflicts", summary: "list the conflict copies merges kept",
        positionals: [PositionalSpec.keychain],
        details: ["""
            One line per conflict copy: its id, the id of the item it is a copy of, the class, and the copy's label,
            service and account. A copy changed since the merge made it says so. Exits 0 when there are none, 7
            when there are some (so that a script can tell).
            """],
        run: { (context) throws(CommandError) in try list(context) })

    static let resolve = Command(
        name: "resolve", summary: "settle a conflict copy: keep the item, or make the copy's version the item",
        options: [OptionSpec(long: "keep", .value("item|copy"), values: .choices(["item", "copy"]), help: "which version stays (required)")],
        positionals: [PositionalSpec("COPY-ID"), PositionalSpec.keychain],
        details: ["""
            --keep item deletes the conflict copy. --keep copy puts the copy's version (its marker taken off) as
            the item and deletes the copy. Either way the copy's tombstone keeps a later merge from making the same
            copy again. COPY-ID is the 32 hexadecimal digits `kcf conflicts` prints.
            """],
        run: { (context) throws(CommandError) in try resolve(context) })

    private static func list(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let keychain = try context.openKeychain()
        let copies = try keychainCall { () throws(KeychainError) in try keychain.conflictCopies() }
        for copy in copies {
            var fields = ["copy \(copy.copyID) of \(copy.itemID)", "\(copy.itemClass)"]
            for attribute in [Attribute.label, .service, .account, .server] {
                if case .string(let text)? = copy.attributes[attribute] { fields.append("\(attribute)=\(SecurityText.quoted(Array(text.utf8)))") }
            }
            if !copy.isItemLive { fields.append("(the item it is a copy of is not live)") }
            if copy.isChanged { fields.append("(changed since the merge)") }
            Output.line(fields.joined(separator: " "))
        }
        return copies.isEmpty ? .success : ExitStatus.conflictsFound
    }

    private static func resolve(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let text = context.arguments.positionals[0]
        let id: ItemID
        do throws(KeychainError) {
            id = try ItemID(hexadecimal: text)
        } catch {
            throw .usage("COPY-ID must be 32 hexadecimal digits, as `kcf conflicts` prints it, not \"\(text)\"")
        }
        let keeping: ConflictResolution
        switch context.value("keep") {
        case "item": keeping = .item
        case "copy": keeping = .copy
        default: throw .usage("--keep item or --keep copy is required")
        }
        let keychain = try context.openKeychain()
        try keychainCall { () throws(KeychainError) in try keychain.resolveConflict(id, keeping: keeping) }
        Output.line(keeping == .item ? "kept the item; deleted conflict copy \(id)" : "kept the copy's version as the item; deleted conflict copy \(id)")
        return .success
    }
}
