@testable import KeychainFile

// Salvage and recovering opens of version 1 files, which only the open-replay target checks.
extension FuzzStore {
    /// Salvages the file at ``path`` into `destination` on the same file system.
    mutating func salvage(with credential: Credential, to destination: String) throws(KeychainError) -> SalvageReport {
        try RecordLog.salvage(
            from: Self.path, credential: credential, to: destination, acknowledgement: nil, fileSystem: fileSystem, using: &random
        ).report
    }

    /// A recovering open (read-only, every item that authenticates).
    mutating func openRecovering(with credential: Credential) throws(KeychainError) -> Keychain {
        try Keychain.open(
            at: Self.path, credential: credential, options: Keychain.OpenOptions(autoCompaction: .disabled, recover: true),
            random: RandomSource(random), clock: Self.clock, fileSystem: fileSystem)
    }
}
