import KeychainFile

/// `show-keychain-info`: what the file is — format version, file id, epoch, head, items by class, key slots,
/// sizes, torn tail — without decrypting a secret.
enum KeychainInfoCommand {
    static let command = Command(
        name: "show-keychain-info", aliases: ["statistics"],
        summary: "print the keychain's format version, file id, item counts, key slots and sizes",
        options: [
            OptionSpec.json("{\"formatVersion\", \"fileID\", \"epoch\", \"head\", \"items\", \"keySlots\": [...], \"file\", \"tornTail\"}"),
            OptionSpec.expectedHead,
        ],
        positionals: [PositionalSpec.keychain],
        details: ["""
            Reads the header and every item's attributes; decrypts no secret (verify does). Key slots are listed in
            the header's order, each with its kind (a password, stretched with Argon2id at the memory, passes and
            lanes shown or with PBKDF2-HMAC-SHA256 at the iterations shown, or a 32-byte raw key) and its id (for removing it with the library). Dead bytes are what
            compact would reclaim.
            """],
        run: { (context) throws(CommandError) in try show(context) })

    private static func show(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let keychain = try context.openKeychain()
        guard let prefix = try KeychainFilePrefix.read(keychain.path) else {
            throw .failure("\(keychain.path) no longer starts as a keychain file", .corrupted)
        }
        let fileID = try keychainCall { () throws(KeychainError) in try keychain.fileID() }
        let statistics = try keychainCall { () throws(KeychainError) in try keychain.statistics() }
        let slots = try keychainCall { () throws(KeychainError) in try keychain.keySlots() }
        var counts: [(itemClass: ItemClass, count: Int)] = []
        for (queryClass, itemClass) in KeychainListing.classes {
            counts.append((itemClass, try KeychainListing.all(queryClass, in: keychain, returning: [.attributes]).count))
        }
        let identities = try KeychainListing.all(.identity, in: keychain, returning: [.attributes]).count
        let total = counts.reduce(0) { $0 + $1.count }

        if context.has("json") {
            var items = Dictionary(uniqueKeysWithValues: counts.map { (AttributeValueNames.name(of: $0.itemClass), JSONValue.integer(Int64($0.count))) })
            items["identity"] = .integer(Int64(identities))
            items["total"] = .integer(Int64(total))
            let torn = keychain.tornTail.map { tail -> JSONValue in
                .object(["description": .string("\(tail)"), "mayHoldCommittedItems": .boolean(tail.mayHoldAcknowledgedData)])
            }
            Output.line(try JSONValue.object([
                "keychain": .string(keychain.path),
                "formatVersion": .integer(Int64(prefix.version)),
                "fileID": .string(Hex.lower(fileID)),
                "epoch": .integer(Int64(clamping: statistics.epoch)),
                "head": .string("\(keychain.head)"),
                "items": .object(items),
                "keySlots": .array(slots.map(KeySlotText.json)),
                "file": .object([
                    "size": .integer(Int64(statistics.fileSize)), "liveBytes": .integer(Int64(statistics.liveBytes)),
                    "deadBytes": .integer(Int64(statistics.deadBytes)),
                ]),
                "tornTail": torn ?? .null,
            ]).text())
            return .success
        }
        Output.line("keychain: \(SecurityText.quoted(Array(keychain.path.utf8)))")
        Output.line("format version: \(prefix.version)")
        Output.line("file id: \(Hex.lower(fileID))")
        Output.line("epoch: \(statistics.epoch)")
        Output.line("head: \(keychain.head)")
        let byClass = counts.map { "\($0.itemClass)s \($0.count)" }.joined(separator: ", ")
        Output.line("items: \(total) (\(byClass); identities \(identities))")
        Output.line("key slots: \(slots.count)")
        for (number, slot) in slots.enumerated() {
            Output.line("    \(number + 1)) \(KeySlotText.kind(slot.kind)); id \(Hex.lower(slot.id))")
        }
        let share = statistics.fileSize == 0 ? 0 : statistics.deadBytes * 100 / statistics.fileSize
        Output.line("file: \(statistics.fileSize) bytes, \(statistics.liveBytes) live, \(statistics.deadBytes) dead (\(share)% reclaimable by compact)")
        Output.line("torn tail: \(keychain.tornTail.map { "\($0)" } ?? "none")")
        return .success
    }
}
