/// How a rewrite changes the key slots (``KeychainLog/rewrite(changing:index:using:)``).
enum SlotChange {
    /// Keep them: compaction.
    case keep
    /// Add a slot for a credential; a password's key derived as the second value says.
    case add(Credential, keyDerivation: PasswordKeyDerivation)
    /// Add a slot for a credential that reaches only the named access groups (format version 3, which the other
    /// versions refuse).
    case addScoped(Credential, groups: [String], keyDerivation: PasswordKeyDerivation)
    /// Remove the slot the credential opens.
    case remove(openedBy: Credential)
    /// Remove the slot with this id.
    case removeID([UInt8])
    /// Replace the slot the first credential opens with one for the second, keeping the master key: a slot-only
    /// change, which an old copy of the file and the first credential still open.
    case replace(openedBy: Credential, with: Credential, keyDerivation: PasswordKeyDerivation)
    /// Replace the slot the first credential opens with one for the second under a new master key, every item
    /// sealed anew: a password change that locks out old copies of the file. Formats 1 and 2 can give the new key
    /// only to a credential at hand, so a keychain with any other slot refuses it (``refusal(otherSlots:)``),
    /// before any key is derived.
    case replaceRotating(openedBy: Credential, with: Credential, keyDerivation: PasswordKeyDerivation)
    /// A new master key, in one slot for each credential.
    case rotate([Credential], keyDerivation: PasswordKeyDerivation)
    /// Add slots another copy of this keychain holds, which wrap the same master key (a merge, SPEC.md §43.1); one
    /// whose id is here already is not added again. Format version 2 only.
    case carry([HeaderKeySlot])
}

extension SlotChange {
    /// The credential a process that opened the file with `current` holds after this change succeeded: the new one
    /// when the change replaced the slot `current` opens, the first of a rotation's credentials when `current` is
    /// not among them, else `current`. A log keeps it to open the file again after another process rotates the
    /// master key, and a version 1 file's upgrade finds its own slot with it.
    func credential(after current: Credential) -> Credential {
        switch self {
        case .replace(let old, let new, _), .replaceRotating(let old, let new, _):
            return old.isSame(as: current) ? new : current
        case .rotate(let credentials, _):
            guard let first = credentials.first, !credentials.contains(where: { $0.isSame(as: current) }) else { return current }
            return first
        case .keep, .add, .addScoped, .remove, .removeID, .carry:
            return current
        }
    }

    /// Why ``replaceRotating(openedBy:with:keyDerivation:)`` is refused for a keychain with `others` (≥ 1) key
    /// slots besides the one changed: the new master key could not be given to them, which would lock them out.
    static func refusal(otherSlots others: Int) -> KeychainError {
        let credentials = others == 1 ? "1 other credential (key slot)" : "\(others) other credentials (key slots)"
        return .invalidParameter(
            "this keychain has \(credentials) besides the one being changed; a password change makes a new master key, which "
                + "can be given only to credentials at hand, so \(others == 1 ? "it" : "they") would be locked out. Either call "
                + "rotateMasterKey(credentials:) with the new password and every credential to keep, or change this slot alone "
                + "with changePasswordKeepingKeys(from:to:) or changeCredentialKeepingKeys(from:to:), which keep the master key: "
                + "an old copy of the file with the old password then still reads what is written after the change")
    }
}
