/// Which version ``Keychain/resolveConflict(_:keeping:)`` keeps.
public enum ConflictResolution: Sendable, Hashable {
    /// The item as it is: the conflict copy is deleted.
    case item
    /// The conflict copy's version: it becomes the item (its marker taken off, its modification date now), and the
    /// copy is deleted.
    case copy
}
