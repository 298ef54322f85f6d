/// How a rewrite changes the key slots (``KeychainLog/rewrite(changing:index:using:)``).
enum SlotChange {
    /// Keep them: compaction.
    case keep
    /// Add a slot for a credential; a password's key derived as the second value says.
    case add(Credential, keyDerivation: PasswordKeyDerivation)
    /// Remove the slot the credential opens.
    case remove(openedBy: Credential)
    /// Remove the slot with this id.
    case removeID([UInt8])
    /// Replace the slot the first credential opens with one for the second.
    case replace(openedBy: Credential, with: Credential, keyDerivation: PasswordKeyDerivation)
    /// A new master key, in one slot for each credential.
    case rotate([Credential], keyDerivation: PasswordKeyDerivation)
}
