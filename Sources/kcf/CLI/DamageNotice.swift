import KeychainFile

/// What `kcf` says on stderr, every time, about a keychain it opened that is damaged or ends in a torn tail,
/// and the exit status that follows: an exit status of 0 means the command saw the whole keychain.
enum DamageNotice {
    /// Set when a recovering open (`--recover`) found damage: a command that otherwise succeeds exits
    /// ``ExitStatus/recoveredDamage``. Only the main thread runs commands.
    nonisolated(unsafe) private(set) static var found = false

    /// Reports the torn tail or the damage of an opened keychain on stderr. A torn tail that may hold committed
    /// items fails the command unless it runs with `--recover`: what it would show or change is not the whole
    /// keychain.
    static func report(_ keychain: Keychain, command: String) throws(CommandError) {
        let prefix = "kcf: \(command): "
        if let recovery = keychain.recovery, recovery.isDamaged {
            found = true
            for damage in recovery.damage { Output.error(prefix + "damage: \(damage)") }
            Output.error(prefix + "--recover: \(keychain.count) items authenticate; \(recovery.damage.count) damaged "
                + "structure\(recovery.damage.count == 1 ? "" : "s") listed above. `kcf repair` keeps a copy of the file and "
                + "rewrites it with these items.")
        }
        guard let tail = keychain.tornTail else { return }
        Output.error(prefix + "warning: \(SecurityText.quoted(Array(keychain.path.utf8))): \(tail)")
        if tail.mayHoldAcknowledgedData && keychain.recovery == nil {
            throw .failure(
                "the keychain's final record does not verify and may hold committed items: run the command with --recover to "
                    + "read every item that still authenticates, or `kcf repair` to keep a copy and rewrite the file",
                .corrupted)
        }
    }

    /// After an open refused as rolled back with no `--expected-head`: the lock file's acknowledgement was the pin.
    static func explainRollback(command: String, lockFile: String) {
        Output.error("kcf: \(command): the lock file \(lockFile) acknowledged more than the keychain file holds: the file was cut "
            + "short, or an older copy put back. --recover reads what it holds; `kcf repair` rewrites it as it is (keeping a copy); "
            + "if the older copy was restored on purpose, remove the lock file while no process has the keychain open.")
    }

    /// After a failed open: how to read what is left.
    static func suggestRecovery(command: String) {
        Output.error("kcf: \(command): --recover reads every item that still authenticates; `kcf repair` keeps a copy and rewrites the file with them")
    }
}
