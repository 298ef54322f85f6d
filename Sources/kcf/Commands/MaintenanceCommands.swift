import KeychainFile

/// `compact`, `verify` and `salvage`: commands about the file rather than its items.
enum MaintenanceCommands {
    static let compact = Command(
        name: "compact", summary: "rewrite the file with only its live items; print before and after",
        options: [OptionSpec.expectedHead],
        positionals: [PositionalSpec("keychain", optional: true)],
        details: ["The file is rewritten in a new epoch and renamed into place (SPEC.md §15.1): overwritten and deleted items are gone from it."],
        run: { (context) throws(CommandError) in try compact(context) })

    static let verify = Command(
        name: "verify", summary: "verify every record and decrypt every secret; print counts, head and torn tail",
        options: [OptionSpec.expectedHead],
        positionals: [PositionalSpec("keychain", optional: true)],
        details: ["""
            Exits 0 when everything verifies; 3 when the records verify but the file ends in a torn tail (an
            incomplete or unverifiable last record: an interrupted write, or damage to that record); 93 when
            the file is damaged before its last record or is not a keychain; 51 for a wrong password.
            """],
        run: { (context) throws(CommandError) in try verify(context) })

    static let salvage = Command(
        name: "salvage", summary: "copy every item that still verifies from a damaged keychain into DEST",
        positionals: [PositionalSpec("DEST"), PositionalSpec("keychain", optional: true)],
        details: ["""
            Keeps the records before the first damage (SPEC.md §17) and writes them to DEST, a new file that
            the same password opens. The damaged file is not changed. DEST must not exist.
            """],
        run: { (context) throws(CommandError) in try salvage(context) })

    private static func compact(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let keychain = try context.openKeychain()
        let result = try keychainCall { () throws(KeychainError) in try keychain.compact() }
        Output.line("before: \(describe(result.before))")
        Output.line("after:  \(describe(result.after))")
        Output.line("reclaimed \(result.before.fileSize - result.after.fileSize) bytes; head \(keychain.head)")
        return .success
    }

    private static func describe(_ statistics: KeychainStatistics) -> String {
        "\(statistics.itemCount) items, \(statistics.fileSize) bytes (\(statistics.liveBytes) live, \(statistics.deadBytes) dead), epoch \(statistics.epoch)"
    }

    private static func verify(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let keychain: Keychain
        do throws(CommandError) {
            keychain = try context.openKeychain()
        } catch {
            if case .keychain(.corrupted) = error {
                Output.error("kcf: verify: `kcf salvage DEST` copies the items of every record before the damage")
            }
            throw error
        }
        var counts: [String] = []
        var itemCount = 0, secretCount = 0, secretBytes = 0
        for (queryClass, itemClass) in KeychainListing.classes {
            let items = try KeychainListing.all(queryClass, in: keychain, returning: [.attributes, .data])
            itemCount += items.count
            for item in items {
                guard let value = item.value else { throw .failed("an item's secret was not returned") }
                secretCount += 1
                secretBytes += value.count
            }
            counts.append("\(itemClass)s \(items.count)")
        }
        let identities = try KeychainListing.all(.identity, in: keychain, returning: [.attributes]).count
        let statistics = try keychainCall { () throws(KeychainError) in try keychain.statistics() }
        let slots = try keychainCall { () throws(KeychainError) in try keychain.keySlots() }
        Output.line("keychain: \(SecurityText.quoted(Array(keychain.path.utf8)))")
        Output.line("header: verified; epoch \(statistics.epoch), \(slots.count) key slot\(slots.count == 1 ? "" : "s")")
        let before = keychain.tornTail == nil ? "" : " before the torn tail"
        Output.line("records: every record\(before) verified; head \(keychain.head)")
        Output.line("items: \(itemCount) (\(counts.joined(separator: ", ")); identities \(identities))")
        Output.line("secrets: \(secretCount) decrypted and authenticated, \(secretBytes) bytes")
        Output.line("file: \(statistics.fileSize) bytes, \(statistics.liveBytes) live, \(statistics.deadBytes) dead")
        if let torn = keychain.tornTail {
            Output.line("torn tail: \(torn)")
            Output.line("    The last record is incomplete or does not verify: an interrupted write, or damage to the last")
            Output.line("    record, which a reader cannot tell apart (SPEC.md §9.2). The next write to this keychain")
            Output.line("    discards these bytes; if they may hold items you need, copy the file first.")
            Output.line("result: TORN TAIL")
            return .tornTail
        }
        Output.line("torn tail: none")
        Output.line("result: OK")
        return .success
    }

    private static func salvage(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let destination = context.arguments.positionals[0]
        let source = try context.existingKeychainPath()
        guard !KeychainLocation.exists(destination) else { throw .failed("a file already exists at \(destination)") }
        let password = try context.secrets.keychainPassword(for: source)
        let report = try keychainCall { () throws(KeychainError) in
            try Keychain.salvage(from: source, credential: .password(password), to: destination)
        }
        Output.line("salvaged \(SecurityText.quoted(Array(source.utf8))) into \(SecurityText.quoted(Array(destination.utf8)))")
        Output.line("items written: \(report.itemCount)")
        Output.line("records kept: \(report.recordsKept) (head \(report.keptHead))")
        if let damage = report.damage {
            Output.line("damage: at byte \(damage.offset): \(damage.reason)")
        } else {
            Output.line("damage: none")
        }
        Output.line("bytes dropped: \(report.droppedByteCount)")
        Output.line("torn tail: \(report.tornTail.map { "\($0)" } ?? "none")")
        Output.line("new head: \(report.newHead)")
        return .success
    }
}
