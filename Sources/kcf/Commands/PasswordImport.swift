import Foundation
import KeychainFile

/// `kcf import` of another password store's export (``ImportFormat``): read the whole input, report what
/// cannot be carried over, then add every item in one batch — all or nothing.
///
/// Items the input holds twice (one primary key) are imported once when they are the same, and stop the
/// import when they differ, since kcf cannot tell which is right. An item the keychain already has stops the
/// import (exit 45, as `import` of a certificate does) unless `-U` is given: then it is updated, its
/// attributes and secret replaced by the imported ones. With `--strict`, an input with anything that would be
/// skipped or not kept is not imported at all.
enum PasswordImport {
    /// The largest file read: an export is text, and a keychain's record holds at most 256 MiB.
    static let maximumFileSize = 256 << 20

    /// Imports `path`, read as `format`.
    static func run(_ format: ImportFormat, path: String, context: CommandContext) throws(CommandError) -> ExitStatus {
        var report = ImportReport()
        // A KeePass database's password is read after the keychain's (the keychain's is the first line of stdin,
        // as for a PKCS #12 file's passphrase), so the keychain is opened first.
        var opened: Keychain?
        var password: String?
        var keyFileKey: [UInt8]?
        defer { if keyFileKey != nil { wipe(&keyFileKey!) } }
        if format == .kdbx {
            if let keyFile = context.value("key-file") {
                var bytes = try file(keyFile)
                defer { wipe(&bytes) }
                do throws(KDBXError) {
                    keyFileKey = try KDBXKeyFile.key(bytes)
                } catch {
                    throw .failure("\(keyFile): not read as a KeePass key file: \(error)", .invalidParameter)
                }
            }
            opened = try context.openKeychain()
            password = try PKCS12Export.passphrase(context, prompt: "password of \(path): ", confirm: false, allowEmpty: true)
            // With a key file, an empty password is none (KeePassXC's convention); without one, it is the empty password.
            if keyFileKey != nil && password == "" { password = nil }
        }
        let read = try items(format, path: path, password: password, keyFileKey: keyFileKey, report: &report)
        let items = try distinct(read, report: &report)
        for line in report.lines { Output.error("kcf: import: " + line) }
        if read.isEmpty && report.skipped.isEmpty {
            Output.error("kcf: import: \(path) holds no items")
        }
        if context.has("strict") && !report.isComplete {
            throw .failed("--strict: \(report.skipped.count) item\(report.skipped.count == 1 ? "" : "s") would be skipped and "
                + "\(report.notKept.count) kind\(report.notKept.count == 1 ? "" : "s") of value not kept (listed above); nothing was imported")
        }
        let keychain: Keychain
        if let opened { keychain = opened } else { keychain = try context.openKeychain() }
        let updating = context.has("U")
        let updated = try ProgressReporter.showing(command: "import", activity: "writing \(items.count) item\(items.count == 1 ? "" : "s")") {
            () throws(CommandError) in try add(items, updating: updating, to: keychain)
        }
        Output.line(summary(items, updated: updated, updating: updating, skipped: report.skipped.count))
        return .success
    }

    /// The items of the input, read as `format`.
    private static func items(
        _ format: ImportFormat, path: String, password: String?, keyFileKey: [UInt8]?, report: inout ImportReport
    ) throws(CommandError) -> [ImportedItem] {
        if format == .pass { return try storeItems(path, report: &report) }
        // The export holds every password in the clear: its bytes are wiped once read.
        var bytes = try file(path)
        defer { wipe(&bytes) }
        if format == .kdbx { return try keePassItems(bytes, path: path, password: password, keyFileKey: keyFileKey, report: &report) }
        do throws(ImportParseError) {
            switch format {
            case .pass, .kdbx:
                return []
            case .bitwardenCSV:
                return try BitwardenCSV.items(from: try CSVTable(parsing: bytes), report: &report)
            case .onePasswordCSV:
                return try OnePasswordCSV.items(from: try CSVTable(parsing: bytes), report: &report)
            case .dumpKeychain:
                let dump = try SecurityDumpReader.items(bytes)
                if !dump.isEmpty && dump.allSatisfy({ $0.data == nil }) {
                    throw ImportParseError("no item has its data: make the dump with `security dump-keychain -d`")
                }
                return SecurityDumpImport.items(from: dump, report: &report)
            }
        } catch {
            throw .failure("\(path): not imported, as a \(format.title): \(error)", .invalidParameter)
        }
    }

    /// The items of a KeePass database.
    ///
    /// - Throws: `CommandError`: `.wrongPassword` (51) when the password does not open it; `.invalidParameter`
    ///   (206) when it is not KDBX 4, is damaged, or asks for more work than kcf allows.
    private static func keePassItems(
        _ bytes: [UInt8], path: String, password: String?, keyFileKey: [UInt8]?, report: inout ImportReport
    ) throws(CommandError) -> [ImportedItem] {
        // The key derivation (AES-KDF or Argon2, as costly as the database asks) can take seconds.
        let progress = ProgressReporter(command: "import", activity: "deriving the database's key and decrypting it")
        defer { progress.finish() }
        do throws(KDBXError) {
            let contents = try KDBXReader.read(bytes, password: password, keyFileKey: keyFileKey)
            return KDBXImport.items(from: try KDBXDatabase(contents.document), report: &report)
        } catch {
            if error == .wrongPassword {
                let words = keyFileKey == nil ? "\(error)" : "wrong password or key file (the header's HMAC does not verify; or the header was altered)"
                throw .failure("\(path): not imported: \(words)", .wrongPassword)
            }
            throw .failure("\(path): not imported, as a KeePass database: \(error)", .invalidParameter)
        }
    }

    /// The items of a password store, decrypted with gpg.
    private static func storeItems(_ root: String, report: inout ImportReport) throws(CommandError) -> [ImportedItem] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .failure("\(root): not imported: a pass password store is a directory (such as ~/.password-store)", .invalidParameter)
        }
        let entries: [PasswordStore.Entry]
        do throws(ImportParseError) {
            entries = try PasswordStore.entries(at: root, report: &report)
        } catch {
            throw .failure("\(root): not imported: \(error)", .io)
        }
        let progress = ProgressReporter(command: "import", activity: "decrypting", total: entries.count)
        defer { progress.finish() }
        do throws(GnuPG.Failure) {
            return try PasswordStore.items(entries, progress: progress, report: &report)
        } catch {
            switch error {
            case .notInstalled: throw .failed("\(root): not imported: gpg was not found on PATH (kcf decrypts the store with gpg, as pass does)")
            case .cannotRun(let reason): throw .failed("\(root): not imported: gpg could not be run: \(reason)")
            case .failed, .tooLarge: throw .failed("\(root): not imported: gpg: \(error)")
            }
        }
    }

    /// The bytes of an export file.
    ///
    /// - Throws: `CommandError` with status `.io` when it cannot be read, `.invalidParameter` when it is a
    ///   directory or larger than ``maximumFileSize``.
    static func file(_ path: String) throws(CommandError) -> [UInt8] {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .failure("\(path) is a directory (a pass password store is imported with -f pass)", .invalidParameter)
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .failure("cannot read \(path): \(String(cString: strerror(errno)))", .io)
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        let data: Data?
        do {
            data = try handle.read(upToCount: maximumFileSize + 1)
        } catch {
            throw .failure("cannot read \(path): \(error.localizedDescription)", .io)
        }
        guard let data else { return [] }
        guard data.count <= maximumFileSize else {
            throw .failure("\(path) is larger than \(maximumFileSize >> 20) MiB, more than an export kcf reads", .invalidParameter)
        }
        return Array(data)
    }

    /// The first `count` bytes of the file at `path` (fewer when it is shorter), or `nil` when it cannot be read:
    /// enough to tell its format.
    static func head(_ path: String, count: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        guard let data = try? handle.read(upToCount: count) else { return nil }
        return Array(data)
    }

    /// `items` with the second of two identical items left out (reported); two different items with one
    /// primary key stop the import.
    private static func distinct(_ items: [ImportedItem], report: inout ImportReport) throws(CommandError) -> [ImportedItem] {
        var first: [PrimaryKey: Int] = [:]
        var kept: [ImportedItem] = []
        for item in items {
            let key = item.attributes.withDefaults().primaryKey
            guard let index = first[key] else {
                first[key] = kept.count
                kept.append(item)
                continue
            }
            let earlier = kept[index]
            guard earlier.attributes == item.attributes && earlier.secret == item.secret else {
                throw .failure("\(earlier.origin) and \(item.origin) are one keychain item (\(describe(item.attributes))) with "
                    + "different contents, and kcf cannot tell which to keep: nothing was imported; remove one of them", .duplicateItem)
            }
            report.skip(item.origin, "the same item as \(earlier.origin)")
        }
        return kept
    }

    /// Adds `items` in one batch; an item the keychain has is updated when `updating`, else stops the batch.
    /// Returns how many were updated.
    private static func add(_ items: [ImportedItem], updating: Bool, to keychain: Keychain) throws(CommandError) -> Int {
        var failed: Int?
        var updated = 0
        do throws(KeychainError) {
            try keychain.batch { (batch) throws(KeychainError) in
                for (index, item) in items.enumerated() {
                    do throws(KeychainError) {
                        _ = try batch.add(item.attributes, secret: item.secret)
                    } catch {
                        guard error == .duplicateItem, updating else {
                            failed = index
                            throw error
                        }
                        try batch.update(PrimaryKeyQuery.query(for: item.attributes), setting: PrimaryKeyQuery.changes(item.attributes),
                                         secret: item.secret)
                        updated += 1
                    }
                }
            }
        } catch {
            guard let failed else { throw .keychain(error) }
            let item = items[failed]
            if error == .duplicateItem {
                throw .failure("\(item.origin) is already in the keychain (\(describe(item.attributes))); nothing was imported "
                    + "(-U updates the items the keychain has)", .duplicateItem)
            }
            throw .failure("\(item.origin): \(CommandError.keychain(error)); nothing was imported", ExitStatus(error))
        }
        return updated
    }

    /// An item's primary key in words: `generic password, service "mail", account "ann"`.
    static func describe(_ attributes: ItemAttributes) -> String {
        func text(_ attribute: Attribute) -> String {
            if case .string(let value)? = attributes[attribute] { return value }
            return ""
        }
        switch attributes.itemClass {
        case .genericPassword:
            return "generic password, service \(ImportReport.quoted(text(.service))), account \(ImportReport.quoted(text(.account)))"
        case .internetPassword:
            var words = "internet password, server \(ImportReport.quoted(text(.server))), account \(ImportReport.quoted(text(.account)))"
            if !text(.path).isEmpty { words += ", path \(ImportReport.quoted(text(.path)))" }
            return words
        case .certificate: return "certificate, same issuer and serial number"
        case .key: return "key"
        }
    }

    /// The line printed on success: `12 items imported (9 internet passwords, 3 generic passwords).`
    private static func summary(_ items: [ImportedItem], updated: Int, updating: Bool, skipped: Int) -> String {
        let added = items.count - updated
        var line = "\(added) item\(added == 1 ? "" : "s") imported"
        if updating { line += ", \(updated) updated" }
        var kinds: [String] = []
        for (itemClass, singular) in [(ItemClass.genericPassword, "generic password"), (.internetPassword, "internet password"),
                                      (.certificate, "certificate")] {
            let count = items.filter { $0.attributes.itemClass == itemClass }.count
            if count > 0 { kinds.append("\(count) \(singular)\(count == 1 ? "" : "s")") }
        }
        if !kinds.isEmpty { line += " (" + kinds.joined(separator: ", ") + ")" }
        line += "."
        if skipped > 0 { line += " \(skipped) skipped (listed on stderr)." }
        return line
    }
}
