import Foundation
import KeychainFile

/// `kcf sync-conflicts`: merges the conflict copies file-syncing tools leave beside keychains into them
/// (SPEC.md §43), and moves each aside once its merge is durable.
enum SyncConflictsCommand {
    static let command = Command(
        name: "sync-conflicts", summary: "merge the conflict copies Syncthing, Nextcloud or Dropbox left beside keychains",
        options: [OptionSpec(long: "dry-run", help: "list the copies and what each is a copy of; merge nothing")],
        positionals: [PositionalSpec("DIR|KEYCHAIN", optional: true, values: .file)],
        details: ["""
            Finds, in DIR (default: the current directory), the files named as conflict copies of a keychain beside
            them: NAME.sync-conflict-DATE-TIME-DEVICE.kcf (Syncthing), NAME (conflicted copy DATE TIME).kcf
            (Nextcloud, ownCloud) and NAME (WHO's conflicted copy DATE).kcf (Dropbox), each of NAME.kcf, and copies
            of those copies. Given a KEYCHAIN (or -k, or $KCF_KEYCHAIN), finds its copies only, whatever its name ends
            with. Only regular files are opened: a symbolic link named like a copy is reported and left.
            """, """
            Each copy is merged into its keychain as `kcf merge` does (no base: tombstones and times decide; an
            item changed in both keeps both versions, one as a conflict copy: `kcf conflicts`). Once the merge is
            durable, the copy is renamed NAME….merged, which the next run leaves alone; delete those when you are
            sure. A copy that cannot be merged (another password, another keychain, damage) stays where it is and
            is reported; the others are still merged. The password (from $KCF_PASSWORD, or asked once) opens every
            copy. Exits 0 when every copy found was merged (or there was none), else the status of the first failure.
            """],
        run: { (context) throws(CommandError) in try run(context) })

    /// What the next run leaves alone: the suffix a merged copy gets.
    static let mergedSuffix = ".merged"

    private static func run(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        // Without an argument: the keychain -k or $KCF_KEYCHAIN names, else the current directory.
        let named = context.value("keychain") ?? context.environment[KeychainLocation.variable].flatMap { $0.isEmpty ? nil : $0 }
        let target = context.arguments.positionals.first ?? named ?? "."
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory) else {
            throw .failure("no directory or keychain at \(target)", .io)
        }
        let directory = isDirectory.boolValue ? target : URL(fileURLWithPath: target).deletingLastPathComponent().path
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw .failure("cannot list \(directory): \(error.localizedDescription)", .io)
        }
        let keychainName = isDirectory.boolValue ? nil : URL(fileURLWithPath: target).lastPathComponent
        var copies: [String: [SyncConflictName]] = [:]
        var status = ExitStatus.success
        for name in names.sorted() {
            // A copy of a copy (two machines' conflicts in a row) belongs to the keychain at the end of the chain.
            guard let first = SyncConflictName(name) else { continue }
            var found = first
            while let next = SyncConflictName(found.original) { found = SyncConflictName(copy: name, original: next.original, tool: found.tool) }
            guard keychainName.map({ found.original == $0 }) ?? found.original.hasSuffix(".kcf") else { continue }
            let path = directory + "/" + found.original
            guard KeychainLocation.exists(path) else {
                Output.error("kcf: \(name) looks like a conflict copy of \(found.original), which is not in \(directory); left alone")
                status = .failure
                continue
            }
            // A syncing tool leaves regular files: a symbolic link (which another machine may have planted) or anything
            // else named like a copy is not opened, nor is a lock file made beside whatever it points to.
            let type = (try? FileManager.default.attributesOfItem(atPath: directory + "/" + name))?[.type] as? FileAttributeType
            guard type == .typeRegular else {
                Output.error("kcf: \(name) is named like a conflict copy of \(found.original) but is not a regular file; left alone")
                status = .failure
                continue
            }
            copies[found.original, default: []].append(found)
        }
        guard !copies.isEmpty else {
            Output.line("no conflict copies of \(keychainName ?? "a keychain") in \(directory)")
            return status
        }
        var password: String? = nil
        for original in copies.keys.sorted() {
            for copy in copies[original]! {
                if context.has("dry-run") {
                    Output.line("\(copy.copy): a \(copy.tool) conflict copy of \(original)")
                    continue
                }
                // Asked once, when there is a copy to merge; every copy opens with it.
                if password == nil { password = try context.secrets.keychainPassword(for: directory + "/" + original) }
                guard let secret = password else { continue }
                do throws(CommandError) {
                    try merge(copy, in: directory, password: secret, context: context)
                } catch {
                    Output.error("kcf: \(copy.copy): \(error.description)")
                    if status == .success { status = error.status }
                }
            }
        }
        return status
    }

    /// Merges one copy into its keychain, then renames it aside and makes the rename durable.
    private static func merge(
        _ copy: SyncConflictName, in directory: String, password: String, context: CommandContext
    ) throws(CommandError) {
        let keychainPath = directory + "/" + copy.original
        let copyPath = directory + "/" + copy.copy
        let options = Keychain.OpenOptions(keyDerivationMemoryLimit: try context.keyDerivationMemoryLimit())
        // Opening the copy makes a lock file beside it, which the syncing tool would carry to every machine.
        let copyLock = copyPath + ".lock"
        let removeCopyLock = !FileManager.default.fileExists(atPath: copyLock)
        defer { if removeCopyLock { try? FileManager.default.removeItem(atPath: copyLock) } }
        let report: MergeReport
        do throws(CommandError) {
            report = try keychainCall { () throws(KeychainError) -> MergeReport in
                let theirs = try Keychain.open(at: copyPath, credential: .password(password), options: options)
                let ours = try Keychain.open(at: keychainPath, credential: .password(password), options: options)
                return try ours.merge(from: theirs)
            }
        } catch {
            throw .failure("not merged into \(copy.original) (left where it is): \(error.description)", error.status)
        }
        for line in MergeReportText.lines(report, theirs: copy.copy, into: copy.original) { Output.line(line) }
        // The merge committed durably (§43.7): only now may the copy go.
        let aside = copyPath + mergedSuffix
        guard !FileManager.default.fileExists(atPath: aside) else {
            throw .failure("merged, but not renamed: \(aside) exists; remove one of them", .io)
        }
        guard rename(copyPath, aside) == 0 else {
            throw .failure("merged, but not renamed to \(aside): \(SystemError.describe(errno))", .io)
        }
        try syncDirectory(directory)
        Output.line("renamed \(copy.copy) to \(copy.copy + mergedSuffix)")
    }

    /// fsync(2) of a directory, so that a rename in it is durable.
    private static func syncDirectory(_ path: String) throws(CommandError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else { throw .failure("cannot open \(path) to make the rename durable: \(SystemError.describe(errno))", .io) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw .failure("fsync of \(path): \(SystemError.describe(errno))", .io) }
    }
}
