/// A conflict copy a merge kept in the keychain (SPEC.md §43.4), as ``Keychain/conflictCopies()`` lists it.
public struct ConflictCopyItem: Sendable, Hashable {
    /// The copy's own item id; ``Keychain/resolveConflict(_:keeping:)`` takes it.
    public let copyID: ItemID
    /// The id of the item it is a copy of (a version of that item that did not win a merge).
    public let itemID: ItemID
    /// The class of both.
    public let itemClass: ItemClass
    /// Whether the item it is a copy of is live; false when it was deleted since.
    public let isItemLive: Bool
    /// Whether the copy was changed since the merge made it (it is then an item of its own to a later merge).
    public let isChanged: Bool
    /// The copy's attributes, its marker included.
    public let attributes: ItemAttributes
}
