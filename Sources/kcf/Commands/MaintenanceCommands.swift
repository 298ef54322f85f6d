#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import KeychainFile

/// `compact`, `verify`, `salvage` and `repair`: commands about the file rather than its items.
enum MaintenanceCommands {
    static let compact = Command(
        name: "compact", summary: "rewrite the file with only its live items; print before and after",
        options: [OptionSpec.expectedHead],
        positionals: [PositionalSpec.keychain],
        details: ["""
            The file is rewritten in a new epoch and renamed into place (SPEC.md §15.1, §26.6): overwritten and
            deleted items are gone from it. A file of format version 1 is rewritten as version 2, as
            `kcf upgrade` does, unless $KCF_KEEP_FORMAT_VERSION=1.
            """],
        run: { (context) throws(CommandError) in try compact(context) })

    static let verify = Command(
        name: "verify", summary: "verify every record and decrypt every secret; print counts, head and torn tail",
        options: [
            OptionSpec.json(
                "{\"result\": \"ok\"|\"tornTail\", \"head\", \"epoch\", \"keySlots\", \"items\", \"secrets\", \"file\", \"parity\", \"tornTail\"}"),
            OptionSpec.expectedHead,
        ],
        positionals: [PositionalSpec.keychain],
        details: ["""
            Exits 0 when everything verifies; 3 when the records verify but the file ends in a torn tail (an
            incomplete or unverifiable last record: an interrupted write, or damage to that record); 93 when
            the file is damaged before its last record or is not a keychain; 51 for a wrong password.
            """, """
            A file of format version 2 or 3 is also scrubbed: each chunk's stored parity is compared with the
            parity of its verified records (SPEC.md §19.5), and a chunk whose parity differs is listed with the
            file bytes of its data and of its parity. A credential scoped to access groups cannot verify the other
            groups' records, so with it the parity is not compared. Like damage that parity repaired on open (listed as repairs), stale
            parity leaves every item readable and does not change the exit status; it would not repair a later
            fault in its chunk, and `kcf repair` rewrites it in place.
            """],
        run: { (context) throws(CommandError) in try verify(context) })

    static let salvage = Command(
        name: "salvage", summary: "copy every item that still verifies from a damaged keychain into DEST",
        positionals: [PositionalSpec("DEST", values: .file), PositionalSpec.keychain],
        details: ["""
            Keeps every item whose boxes still authenticate, records after the damage included (SPEC.md §17),
            and writes them to DEST, a new file that the same password opens. Everything that could not be read
            is listed, with the item id where it is known. The damaged file is not changed. DEST must not exist.
            The damaged keychain must be named (KEYCHAIN, -k or KCF_KEYCHAIN): salvage never takes the default
            keychain unnamed, as `kcf salvage damaged.kcf` would otherwise salvage it into damaged.kcf's place.
            Exits 0 when nothing was damaged, 5 when something was (listed).
            """],
        run: { (context) throws(CommandError) in try salvage(context) })

    static let repair = Command(
        name: "repair", summary: "keep a copy of a damaged keychain, then rewrite it with every item that still verifies",
        options: [OptionSpec(long: "backup", .value("PATH"), values: .file, help: "where to keep the copy (default: KEYCHAIN.damaged-YYYYMMDDTHHMMSSZ)")],
        positionals: [PositionalSpec.keychain],
        details: ["""
            Copies the file to the backup path and makes the copy durable first; then rewrites the keychain in
            place, under its lock, with every item whose boxes still authenticate (as salvage does), and lists
            what could not be read. The way to drop a final record that does not verify and may hold committed
            items, which no other command writes over. Exits 0 when nothing was damaged, 5 when something was.
            """, """
            A keychain of format version 2 or 3 whose records all verify, repaired by parity where they needed it, is
            not rewritten: after the copy, and under its lock, it is read and verified again, what parity
            repaired is written back, and stale parity (what `kcf verify` lists) is rewritten from the records
            where it differs (SPEC.md §19.5, §26.5). Items, head and epoch stay as they were; exits 0.
            """],
        run: { (context) throws(CommandError) in try repair(context) })

    private static func compact(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let keychain = try context.openKeychain()
        let result = try ProgressReporter.showingItems(command: "compact", activity: "rewriting the file: items written") {
            (handler) throws(CommandError) in try keychainCall { () throws(KeychainError) in try keychain.compact(progress: handler) }
        }
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
            // The error first, then what to do about it.
            if case .keychain(let failure) = error, case .corrupted = failure {
                throw .keychainWithHint(failure, hint: "kcf: verify: `kcf salvage DEST` copies the items of every record before the damage")
            }
            throw error
        }
        var counts: [String] = []
        var countsByClass: [String: JSONValue] = [:]
        var itemCount = 0, secretCount = 0, secretBytes = 0
        let progress = ProgressReporter(command: "verify", activity: "decrypting every secret, class", total: KeychainListing.classes.count)
        defer { progress.finish() }
        for (done, (queryClass, itemClass)) in KeychainListing.classes.enumerated() {
            progress.update(done)
            let items = try KeychainListing.all(queryClass, in: keychain, returning: [.attributes, .data])
            itemCount += items.count
            for item in items {
                guard let value = item.value else { throw .failed("an item's secret was not returned") }
                secretCount += 1
                secretBytes += value.count
            }
            counts.append("\(itemClass)s \(items.count)")
            countsByClass[AttributeValueNames.name(of: itemClass)] = .integer(Int64(items.count))
        }
        let identities = try KeychainListing.all(.identity, in: keychain, returning: [.attributes]).count
        let statistics = try keychainCall { () throws(KeychainError) in try keychain.statistics() }
        let slots = try keychainCall { () throws(KeychainError) in try keychain.keySlots() }
        // Version 1 keeps no parity; a keychain opened with --recover did not verify every record to compare it with,
        // nor did a credential scoped to access groups, which cannot verify the other groups' bytes.
        let notCompared = ParityText.notCompared(
            formatVersion: keychain.fileFormatVersion, recovered: keychain.recovery != nil, scoped: keychain.scope != .full)
        let parity = notCompared == nil ? try keychainCall { () throws(KeychainError) in try keychain.checkParity() } : nil
        progress.finish()
        if context.has("json") {
            countsByClass["identity"] = .integer(Int64(identities))
            countsByClass["total"] = .integer(Int64(itemCount))
            let torn = keychain.tornTail.map { tail -> JSONValue in
                .object(["description": .string("\(tail)"), "mayHoldCommittedItems": .boolean(tail.mayHoldAcknowledgedData)])
            }
            Output.line(try JSONValue.object([
                "keychain": .string(keychain.path),
                "result": .string(keychain.tornTail == nil ? "ok" : "tornTail"),
                "head": .string("\(keychain.head)"),
                "epoch": .integer(Int64(clamping: statistics.epoch)),
                "keySlots": .integer(Int64(slots.count)),
                "items": .object(countsByClass),
                "secrets": .object(["count": .integer(Int64(secretCount)), "bytes": .integer(Int64(secretBytes))]),
                "file": .object([
                    "size": .integer(Int64(statistics.fileSize)), "liveBytes": .integer(Int64(statistics.liveBytes)),
                    "deadBytes": .integer(Int64(statistics.deadBytes)),
                ]),
                "parity": ParityText.json(parity),
                "tornTail": torn ?? .null,
            ].merging(keychain.repairs.isEmpty ? [:] : ["repairs": .string("\(keychain.repairs)")]) { $1 }).text())
            return keychain.tornTail == nil ? .success : .tornTail
        }
        Output.line("keychain: \(SecurityText.quoted(Array(keychain.path.utf8)))")
        Output.line("header: verified; epoch \(statistics.epoch), \(slots.count) key slot\(slots.count == 1 ? "" : "s")")
        let before = keychain.tornTail == nil ? "" : " before the torn tail"
        Output.line("records: every record\(before) verified; head \(keychain.head)")
        Output.line("items: \(itemCount) (\(counts.joined(separator: ", ")); identities \(identities))")
        Output.line("secrets: \(secretCount) decrypted and authenticated, \(secretBytes) bytes")
        Output.line("file: \(statistics.fileSize) bytes, \(statistics.liveBytes) live, \(statistics.deadBytes) dead")
        if !keychain.repairs.isEmpty {
            Output.line("repairs: \(keychain.repairs); the next write puts the repaired bytes back")
        }
        for line in ParityText.verifyLines(parity, notCompared: notCompared ?? "") { Output.line(line) }
        if let torn = keychain.tornTail {
            Output.line("torn tail: \(torn)")
            if torn.mayHoldAcknowledgedData {
                Output.line("    The last record does not verify, and nothing shows it was never acknowledged (SPEC.md §9.3):")
                Output.line("    it may hold committed items. No write discards it; `kcf repair` keeps a copy first.")
            } else {
                Output.line("    The last record is what an interrupted write left, never acknowledged (SPEC.md §9.3). The next")
                Output.line("    write to this keychain discards these bytes.")
            }
            Output.line("result: TORN TAIL")
            return .tornTail
        }
        Output.line("torn tail: none")
        Output.line("result: OK")
        return .success
    }

    /// Refuses to take the damaged keychain from the per-user default: `kcf salvage damaged.kcf`, meant as
    /// SOURCE DEST with DEST missing, would otherwise salvage the default keychain into `damaged.kcf`'s place.
    private static func requireNamedSource(_ context: CommandContext) throws(CommandError) {
        let named = context.arguments.positionals.count > 1 || context.value("keychain") != nil
            || !(context.environment[KeychainLocation.variable] ?? "").isEmpty
        guard named else {
            throw .usage("name the damaged keychain: kcf \(context.command.name) DEST KEYCHAIN (or -k KEYCHAIN, or KCF_KEYCHAIN); the default keychain is never taken unnamed here")
        }
    }

    private static func salvage(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let destination = context.arguments.positionals[0]
        try requireNamedSource(context)
        let source = try context.existingKeychainPath()
        guard !KeychainLocation.exists(destination) else { throw .failed("a file already exists at \(destination)") }
        let password = try context.secrets.keychainPassword(for: source)
        let report = try ProgressReporter.showingItems(command: "salvage", activity: "reading every record that still verifies, then writing its items") {
            (handler) throws(CommandError) in
            try keychainCall { () throws(KeychainError) in
                try Keychain.salvage(from: source, credential: .password(password), to: destination, progress: handler)
            }
        }
        Output.line("salvaged \(SecurityText.quoted(Array(source.utf8))) into \(SecurityText.quoted(Array(destination.utf8)))")
        return describe(report)
    }

    /// Prints a salvage or repair report; `.recoveredDamage` when anything could not be read.
    private static func describe(_ report: SalvageReport) -> ExitStatus {
        Output.line("items written: \(report.itemCount)")
        Output.line("last record read: \(report.recordsKept) (head \(report.keptHead))")
        if report.damages.isEmpty { Output.line("damage: none") }
        for damage in report.damages { Output.line("damage: \(damage)") }
        Output.line("bytes unreadable: \(report.droppedByteCount)")
        Output.line("torn tail: \(report.tornTail.map { "\($0)" } ?? "none")")
        Output.line("new head: \(report.newHead)")
        return report.damages.isEmpty ? .success : .recoveredDamage
    }

    private static func repair(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let path = try context.existingKeychainPath()
        let backup = context.value("backup") ?? path + ".damaged-" + timestamp()
        guard !KeychainLocation.exists(backup) else { throw .failed("a file already exists at \(backup)") }
        let password = try context.secrets.keychainPassword(for: path)
        if let status = try repairInPlace(path, password: password, backup: backup) { return status }
        let report = try ProgressReporter.showingItems(command: "repair", activity: "copying the file, then rewriting it with every item that verifies") {
            (handler) throws(CommandError) in
            try keychainCall { () throws(KeychainError) in
                try Keychain.repair(at: path, credential: .password(password), keepingCopyAt: backup, progress: handler)
            }
        }
        Output.line("repaired \(SecurityText.quoted(Array(path.utf8))); the file as it was is kept at \(SecurityText.quoted(Array(backup.utf8)))")
        return describe(report)
    }

    /// Repairs a version 2 or 3 keychain whose records all verify (repaired by parity where they needed it) without
    /// rewriting it: the copy, then what parity repaired written back and stale parity rewritten
    /// (`Keychain.repairParity(keepingCopyAt:)`). `nil` when the keychain does not open so — it does not open, is
    /// of version 1, or ends in records that may hold committed items — and is to be rewritten.
    private static func repairInPlace(_ path: String, password: String, backup: String) throws(CommandError) -> ExitStatus? {
        guard let keychain = try? Keychain.open(at: path, credential: .password(password)), keychain.fileFormatVersion >= 2,
              keychain.tornTail?.mayHoldAcknowledgedData != true
        else { return nil }
        let repairs = keychain.repairs
        let torn = keychain.tornTail
        let parity = try keychainCall { () throws(KeychainError) in try keychain.repairParity(keepingCopyAt: backup) }
        Output.line(
            "repaired \(SecurityText.quoted(Array(path.utf8))) in place, its records all verified; the file as it was is kept at "
                + SecurityText.quoted(Array(backup.utf8)))
        Output.line("repairs: \(repairs.isEmpty ? "none to write back" : "\(repairs), written back")")
        for line in ParityText.repairLines(parity) { Output.line(line) }
        Output.line("torn tail: \(torn.map { "\($0); cut, as every write cuts it" } ?? "none")")
        Output.line("items: \(keychain.count); head \(keychain.head)")
        return .success
    }

    /// The current UTC time as `YYYYMMDDTHHMMSSZ`.
    private static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }
}
