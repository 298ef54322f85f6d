import KeychainFile

/// Every `kcf` command, in the order `kcf help` lists them.
enum CommandTable {
    static let all: [Command] = [
        KeychainPasswordCommands.createKeychain,
    ] + PasswordCommands.commands(for: .genericPassword) + PasswordCommands.commands(for: .internetPassword) + [
        ImportCommands.importCommand,
        ImportCommands.addCertificates,
        CertificateCommands.findCertificate,
        CertificateCommands.findKey,
        CertificateCommands.findIdentity,
        DeleteCertificateCommands.deleteCertificate,
        DeleteCertificateCommands.deleteIdentity,
        ExportCommand.command,
        DumpKeychainCommand.command,
        RunCommand.command,
        KeychainPasswordCommands.changePassword,
        CredentialCommands.addCredential,
        CredentialCommands.listCredentials,
        CredentialCommands.removeCredential,
        DeleteKeychainCommand.command,
        MaintenanceCommands.compact,
        UpgradeCommand.command,
        MergeCommand.command,
        ConflictCommands.conflicts,
        ConflictCommands.resolve,
        GitSetupCommand.command,
        DiffTextCommand.command,
        SyncConflictsCommand.command,
        MaintenanceCommands.verify,
        KeychainInfoCommand.command,
        MaintenanceCommands.salvage,
        MaintenanceCommands.repair,
        DemoCommand.command,
        CompletionCommand.command,
        HelpText.helpCommand,
    ]

    /// The command with this name or alias.
    static func command(named name: String) -> Command? {
        all.first { $0.name == name || $0.aliases.contains(name) }
    }
}
