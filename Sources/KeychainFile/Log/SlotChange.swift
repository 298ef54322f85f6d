/// How a rewrite changes the key slots (``KeychainLog/rewrite(changing:index:using:)``).
enum SlotChange {
    /// Keep them: compaction.
    case keep
    /// Add a slot for a credential.
    case add(Credential, iterations: PasswordIterations)
    /// Remove the slot the credential opens.
    case remove(openedBy: Credential)
    /// Remove the slot with this id.
    case removeID([UInt8])
    /// Replace the slot the first credential opens with one for the second.
    case replace(openedBy: Credential, with: Credential, iterations: PasswordIterations)
    /// A new master key, in one slot for each credential.
    case rotate([Credential], iterations: PasswordIterations)
}
