/// Something a recovering open or a salvage could not read in a damaged keychain file (SPEC.md §17): where,
/// which item it costs when that is known, and why.
///
/// For example, after `Keychain.open(at:credential:options:)` with `options.recover = true`:
/// ```swift
/// for damage in keychain.recovery?.damage ?? [] { print(damage) }
/// // "item 3f2a…: its latest version, at byte 4,210, does not authenticate: secret box"
/// ```
public struct Damage: Sendable, Equatable, CustomStringConvertible {
    /// What the damage costs.
    public enum Loss: Sendable, Equatable {
        /// An item's version could not be read. When its id could be authenticated (``itemID``), the item is
        /// left out, never served at an older version — unless the page that held the version was itself not
        /// applied, the item is live in another group than the page's (version 3), or what changed it was taken back
        /// and named (SPEC.md §25.3): another report then names the item, listed at its older version. When the id
        /// could not be authenticated, it was either a new item, which is lost, or an update of an item that may then
        /// be listed at its older version.
        case item
        /// A deletion could not be read: the item it deleted (``itemID`` when known) may be listed although it
        /// was deleted.
        case deletion
        /// Bytes whose structure could not be read at all: the items they added, updated or deleted are unknown
        /// (an item listed may be at an older version, or may have been deleted there).
        case region(byteCount: Int)
        /// An authentic entry that could not be applied after earlier damage: it conflicts with what was read, or
        /// (version 3) its page opened only past damage to its group's chain and no commit's heads confirmed its
        /// place. The item (``itemID``) may be listed at an older version, or although it was deleted.
        case conflict
        /// A final record that the lock file shows was never acknowledged: a crash remnant, not applied.
        case crashRemnant(byteCount: Int)
        /// An authentic change that no authenticated head confirms (SPEC.md §25.3): damage after it broke the chain
        /// of records that links it to the newest commit's head, or the records after it end with another head than
        /// that one (only the older commit slot's agrees, which another copy's reads as well). The item
        /// (``itemID``) is listed as the change left it (not listed, if the change deleted it), which is most
        /// likely what was acknowledged — unless another copy of the file, forked from an earlier commit, had its
        /// records put there, when it is that copy's version. Check it before trusting it.
        case unconfirmed
    }

    /// The file offset of the damaged structure.
    public let offset: Int
    /// The item concerned, when its id could be authenticated.
    public let itemID: ItemID?
    /// What the damage costs.
    public let loss: Loss
    /// Why, in words.
    public let reason: String

    public init(offset: Int, itemID: ItemID? = nil, loss: Loss, reason: String) {
        self.offset = offset
        self.itemID = itemID
        self.loss = loss
        self.reason = reason
    }

    public var description: String {
        let item = itemID.map { "item \($0)" }
        switch loss {
        case .item:
            guard let item else {
                return "an item of unknown id: the version at byte \(offset) cannot be read (\(reason)); if it was new it is lost, "
                    + "if it updated an item, that item may be listed at an older version"
            }
            return "\(item): the version at byte \(offset) cannot be read (\(reason)); the item is left out"
        case .deletion:
            return "a deletion at byte \(offset) cannot be read (\(reason)); \(item ?? "the item it deleted") may still be listed"
        case .region(let count):
            return "\(count) bytes at byte \(offset) cannot be read (\(reason)); the items they added, updated or deleted are "
                + "unknown: an item listed may be at an older version, or deleted"
        case .conflict:
            return "\(item ?? "an entry") at byte \(offset) cannot be applied after earlier damage (\(reason))"
        case .crashRemnant(let count):
            return "\(count) bytes at byte \(offset) were never acknowledged (\(reason)); not applied"
        case .unconfirmed:
            return "\(item ?? "an item") was changed after byte \(offset) by records that no authenticated head confirms (\(reason)); "
                + "listed as they left it (not listed, if they deleted it), which may be another copy's version"
        }
    }
}
