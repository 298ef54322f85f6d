import Foundation
import KeychainFile

/// `kcf merge`: merges another copy of a keychain into it (SPEC.md §43), as `git merge` calls a merge driver.
enum MergeCommand {
    static let command = Command(
        name: "merge", summary: "merge another copy of a keychain into it; conflicts are kept as conflict copies",
        options: [
            OptionSpec(long: "base", .value("BASE"), values: .file, help: "the copy both came from, when known (git passes it as %O)"),
            OptionSpec("o", long: "output", .value("OUT"), values: .file, help: "write the merged keychain to OUT (a new file) and leave OURS as it is"),
            OptionSpec(long: "import", help: "copy the items of another keychain (another file id) across"),
        ],
        positionals: [PositionalSpec("OURS", values: .file), PositionalSpec("THEIRS", values: .file)],
        details: ["""
            Items are matched by item id. With --base, a change or deletion made on one side only is taken as it
            is; without it, the file's tombstones tell a deletion from an addition, and modification times order
            a change and a deletion (a machine with a wrong clock can misorder them: each version of THEIRS a
            deletion here overrode is listed as "not kept"). An item changed on both sides keeps the newer version, and the other is kept as a conflict
            copy, an item whose account (or key tag, or certificate serial) ends in "(conflict ITEM-ID COPY)":
            `kcf conflicts` lists them and `kcf resolve` settles them. Two different items that end with one
            primary key keep the newer; the other becomes a conflict copy. Nothing either copy holds is dropped.
            """, """
            OURS keeps its credentials; the password opens all the copies. With --base, a credential added in THEIRS
            since the base is carried over (format version 2); one removed in OURS stays removed. The merge is one transaction: a crash
            leaves OURS as it was or merged. THEIRS and BASE are only read. Exits 0 when merged (conflict copies
            included, as git's merge driver expects), 206 when the copies are of different keychains (see --import),
            252 when OURS is format version 1 (it keeps no tombstones: `kcf upgrade` it first).
            As a git merge driver: `kcf merge --base %O %A %B`, with the password in $KCF_PASSWORD.
            """],
        run: { (context) throws(CommandError) in try merge(context) })

    private static func merge(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let (oursPath, theirsPath) = (context.arguments.positionals[0], context.arguments.positionals[1])
        let paths = [oursPath, theirsPath] + [context.value("base"), context.value("output")].compactMap { $0 }
        for path in paths.dropLast(context.value("output") == nil ? 0 : 1) where !KeychainLocation.exists(path) {
            throw .failure("no keychain at \(path)", .io)
        }
        if let base = context.value("base"), sameFile(base, oursPath) || sameFile(base, theirsPath) {
            throw .usage("--base names OURS or THEIRS itself; the base is the copy both came from (git's %O)")
        }
        // git hands a merge driver temporary files (%O, %A, %B): a lock file this command made beside one of them would
        // be left in the work tree. Those of the inputs only read, and of a git temporary OURS, that were not there
        // before are removed when the keychains are closed; another OURS keeps its lock file, which other processes may
        // be using (SPEC.md §16).
        var removable = [theirsPath] + [context.value("base")].compactMap { $0 }
        if URL(fileURLWithPath: oursPath).lastPathComponent.hasPrefix(".merge_file_") { removable.append(oursPath) }
        let lockFiles = removable.map { $0 + ".lock" }.filter { !FileManager.default.fileExists(atPath: $0) }
        defer { for lockFile in lockFiles { try? FileManager.default.removeItem(atPath: lockFile) } }
        return try mergeOpened(context, ours: oursPath, theirs: theirsPath)
    }

    /// Whether two paths name one file (the same device and inode), following symbolic links.
    private static func sameFile(_ left: String, _ right: String) -> Bool {
        guard let a = try? FileManager.default.attributesOfItem(atPath: URL(fileURLWithPath: left).resolvingSymlinksInPath().path),
              let b = try? FileManager.default.attributesOfItem(atPath: URL(fileURLWithPath: right).resolvingSymlinksInPath().path)
        else { return false }
        return (a[.systemNumber] as? NSNumber) == (b[.systemNumber] as? NSNumber)
            && (a[.systemFileNumber] as? NSNumber) == (b[.systemFileNumber] as? NSNumber)
    }

    /// The merge itself; every keychain it opens is closed when it returns.
    private static func mergeOpened(_ context: CommandContext, ours oursPath: String, theirs theirsPath: String) throws(CommandError) -> ExitStatus {
        let password = try context.secrets.keychainPassword(for: oursPath)
        let options = Keychain.OpenOptions(keyDerivationMemoryLimit: try context.keyDerivationMemoryLimit())
        func open(_ path: String) throws(CommandError) -> Keychain {
            try keychainCall { () throws(KeychainError) in try Keychain.open(at: path, credential: .password(password), options: options) }
        }
        let theirs = try open(theirsPath)
        let base = try context.value("base").map { (path) throws(CommandError) in try open(path) }
        var target = oursPath
        if let output = context.value("output") {
            guard !KeychainLocation.exists(output) else { throw .failure("\(output) exists; -o writes a new file", .io) }
            try copyFile(from: oursPath, to: output)
            target = output
        }
        let report: MergeReport
        do throws(CommandError) {
            let ours = try open(target)
            report = try keychainCall { () throws(KeychainError) in
                try ours.merge(from: theirs, base: base, importing: context.has("import"))
            }
        } catch {
            // A refused merge leaves no half-made OUT behind (and its lock file, made by this command).
            if target != oursPath {
                try? FileManager.default.removeItem(atPath: target)
                try? FileManager.default.removeItem(atPath: target + ".lock")
            }
            throw error
        }
        let lines = MergeReportText.lines(
            report, theirs: SecurityText.quoted(Array(theirsPath.utf8)), into: SecurityText.quoted(Array(target.utf8)),
            baseGiven: base != nil || context.has("import"))
        for line in lines { Output.line(line) }
        return .success
    }

    /// Copies OURS to a new file for `-o` (owner read and write only, as a keychain is created), durably, before the
    /// merge writes into the copy.
    private static func copyFile(from source: String, to destination: String) throws(CommandError) {
        do {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
            guard FileManager.default.createFile(atPath: destination, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown)
            }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: destination))
            defer { try? handle.close() }
            try handle.write(contentsOf: bytes)
            try handle.synchronize()
        } catch {
            try? FileManager.default.removeItem(atPath: destination)
            throw .failure("copying \(source) to \(destination): \(error.localizedDescription)", .io)
        }
    }
}
