#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import KeychainFile

/// A `pass` password store: a directory tree in which each `NAME.gpg` file is one entry, encrypted with gpg,
/// whose first line is the password and whose other lines are notes.
///
/// Each entry becomes a generic password:
/// - its service is the entry's path in the store without `.gpg` (`Social/mastodon.social`), so that
///   `kcf find-generic-password -s Social/mastodon.social -w` prints what `pass show -c` copies;
/// - its account is the value of the first `login:`, `username:` or `user:` line of the notes (any case), the
///   convention of browserpass and pass-import, else empty;
/// - its secret is the first line without its line break; the notes (without the final line break) are its
///   comment (`icmt`).
///
/// Files are decrypted one by one with gpg (``GnuPG``). The store's own files (`.gpg-id`, `.gpg-id.sig`,
/// `.gitattributes`, the `.git` and `.extensions` directories) are passed over; every other file that is not
/// a `.gpg` file, and every symbolic link inside the store (not followed: it would import an entry twice or
/// something outside the store), is reported as skipped, and so is a file gpg cannot decrypt, with gpg's
/// message. A directory that cannot be read stops the import.
enum PasswordStore {
    /// One `.gpg` file of the store.
    struct Entry {
        /// Its path in the store, without `.gpg`: the item's service.
        let name: String
        /// Its path on disk.
        let path: String
    }

    /// The `.gpg` files under `root`, in the order of their paths (byte order), reporting what is passed over.
    ///
    /// - Throws: ``ImportParseError`` when a directory cannot be read.
    static func entries(at root: String, report: inout ImportReport) throws(ImportParseError) -> [Entry] {
        var entries: [Entry] = []
        try walk(directory: root, prefix: "", into: &entries, report: &report)
        return entries
    }

    /// The items for `entries`, decrypting each file; `progress` is told each one done.
    ///
    /// - Throws: ``GnuPG/Failure/notInstalled`` or ``GnuPG/Failure/cannotRun(_:)``: nothing can be decrypted.
    static func items(_ entries: [Entry], progress: ProgressReporter, report: inout ImportReport) throws(GnuPG.Failure) -> [ImportedItem] {
        var items: [ImportedItem] = []
        for (done, entry) in entries.enumerated() {
            progress.update(done)
            let origin = entry.name + ".gpg"
            var plaintext: [UInt8]
            do throws(GnuPG.Failure) {
                plaintext = try GnuPG.decrypt(entry.path, limit: ImportedItem.maximumSecretSize + maximumNotesSize)
            } catch {
                switch error {
                case .notInstalled, .cannotRun: throw error
                case .failed(let status, let message):
                    report.skip(origin, "gpg could not decrypt it" + (status == 0 ? "" : " (exit status \(status))")
                        + (message.isEmpty ? "" : ": \(message)"))
                case .tooLarge(let limit):
                    report.skip(origin, "it decrypts to more than \(limit) bytes")
                }
                continue
            }
            defer { wipe(&plaintext) }
            if let item = item(for: entry, plaintext: plaintext, origin: origin, report: &report) { items.append(item) }
        }
        progress.update(entries.count)
        return items
    }

    /// The most bytes of notes an entry may have besides its password: an attribute's limit.
    static let maximumNotesSize = ItemAttributes.maximumValueByteCount + 2

    /// The item for one decrypted entry, or `nil` after reporting why there is none.
    static func item(for entry: Entry, plaintext: [UInt8], origin: String, report: inout ImportReport) -> ImportedItem? {
        var password: ArraySlice<UInt8> = plaintext[...]
        var notes: ArraySlice<UInt8> = []
        if let newline = plaintext.firstIndex(of: 0x0A) {
            password = plaintext[..<newline]
            notes = plaintext[(newline + 1)...]
        }
        if password.last == 0x0D { password = password.dropLast() }
        if notes.last == 0x0A { notes = notes.dropLast() }
        if notes.last == 0x0D { notes = notes.dropLast() }
        var values: [Attribute: AttributeValue] = [.service: .string(entry.name), .account: .string("")]
        if !notes.isEmpty {
            if let text = String(validating: notes, as: UTF8.self) {
                values[.comment] = .string(text)
                if let login = login(in: text) { values[.account] = .string(login) }
            } else {
                report.notKept("notes that are not UTF-8 text", in: origin)
            }
        }
        return ImportedItem.make(.genericPassword, values, secret: Array(password), origin: origin, report: &report)
    }

    /// The value of the first `login:`, `username:` or `user:` line of `notes`, spaces around it removed.
    static func login(in notes: String) -> String? {
        for line in notes.split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].lowercased()
            guard ["login", "username", "user"].contains(key) else { continue }
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            return String(value.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
        }
        return nil
    }

    /// The names `pass` keeps for itself, passed over without a word.
    static let ownFiles: Set<String> = [".gpg-id", ".gpg-id.sig", ".gitattributes", ".git", ".extensions"]

    /// Adds the entries of `directory` (whose path in the store is `prefix`) and of its subdirectories.
    private static func walk(directory: String, prefix: String, into entries: inout [Entry], report: inout ImportReport) throws(ImportParseError) {
        for name in try names(in: directory) {
            let path = directory + "/" + name.text
            let shown = prefix + name.text
            if ownFiles.contains(name.text) { continue }
            guard name.isUTF8 else {
                report.skip(ImportReport.quoted(shown), "its name is not UTF-8, which a keychain's service must be")
                continue
            }
            var status = stat()
            guard lstat(path, &status) == 0 else {
                throw ImportParseError("cannot read \(path): \(SystemError.describe(errno))")
            }
            switch status.st_mode & S_IFMT {
            case S_IFDIR:
                try walk(directory: path, prefix: shown + "/", into: &entries, report: &report)
            case S_IFLNK:
                report.skip(shown, "a symbolic link" + (linkTarget(path).map { " (to \($0))" } ?? "") + ": not followed")
            case S_IFREG where name.text.hasSuffix(".gpg") && name.text.count > 4:
                entries.append(Entry(name: String(shown.dropLast(4)), path: path))
            case S_IFREG:
                report.skip(shown, "not a .gpg file")
            default:
                report.skip(shown, "not a regular file")
            }
        }
    }

    /// The names in `directory` but `.` and `..`, in byte order, each with whether it is UTF-8.
    private static func names(in directory: String) throws(ImportParseError) -> [(text: String, isUTF8: Bool)] {
        guard let stream = opendir(directory) else {
            throw ImportParseError("cannot read the directory \(directory): \(SystemError.describe(errno))")
        }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw ImportParseError("cannot read the directory \(directory): \(SystemError.describe(errno))") }
                break
            }
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if bytes == [0x2E] || bytes == [0x2E, 0x2E] { continue }
            names.append(bytes)
        }
        return names.sorted { $0.lexicographicallyPrecedes($1) }.map { bytes in
            let text = String(validating: bytes, as: UTF8.self)
            return (text ?? String(decoding: bytes, as: UTF8.self), text != nil)
        }
    }

    /// Where the symbolic link at `path` points, or `nil` when that cannot be read.
    private static func linkTarget(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { readlink(path, $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}
