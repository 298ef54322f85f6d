import KeychainFile

/// `kcf upgrade`: rewrites a keychain of format version 1 as version 2 (SPEC.md §26.7).
enum UpgradeCommand {
    static let command = Command(
        name: "upgrade", summary: "rewrite a keychain of format version 1 as format version 2",
        options: [OptionSpec.expectedHead],
        positionals: [PositionalSpec.keychain],
        details: ["""
            The file is rewritten in a new epoch with the same items, file id and master key, and renamed into
            place, as compaction does: a crash leaves the old file or the new one, whole. The password given gets
            a committed key slot; every other key slot is kept as a legacy slot, and its password or key opens the
            file as before. Readers of KeychainFile before format version 2 cannot open the upgraded file. A
            keychain of version 2 or 3 already is left as it is (exit 0, and it says so): nothing upgrades a version
            2 keychain to version 3.
            """],
        run: { (context) throws(CommandError) in try upgrade(context) })

    private static func upgrade(_ context: CommandContext) throws(CommandError) -> ExitStatus {
        let keychain = try context.openKeychain()
        let quoted = SecurityText.quoted(Array(keychain.path.utf8))
        let upgraded = try ProgressReporter.showingItems(command: "upgrade", activity: "rewriting the file as version 2: items written") {
            (handler) throws(CommandError) in try keychainCall { () throws(KeychainError) in try keychain.upgradeFormat(progress: handler) }
        }
        if upgraded {
            Output.line("upgraded \(quoted) to format version \(keychain.fileFormatVersion): \(keychain.count) items; head \(keychain.head)")
        } else {
            Output.line("\(quoted) is already format version \(keychain.fileFormatVersion); nothing to do")
        }
        return .success
    }
}
