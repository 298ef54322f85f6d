/// One conflict a merge met and how it settled it (SPEC.md §43.3–§43.5). Nothing in a conflict is dropped: the
/// version that did not win is kept as a conflict copy, which ``Keychain/conflictCopies()`` lists and
/// ``Keychain/resolveConflict(_:keeping:)`` settles.
///
/// For example:
/// ```swift
/// let report = try ours.merge(from: theirs)
/// for conflict in report.conflicts {
///     print(conflict)   // e.g. "generic password 3f0c…: changed on both sides; the older kept as 9a1b…"
/// }
/// ```
public struct MergeConflict: Sendable, Hashable, CustomStringConvertible {
    /// What kind of conflict it was.
    public enum Kind: Sendable, Hashable {
        /// Both copies hold the item at different versions that neither can be shown to follow: the newer is the
        /// item, the other is kept as a conflict copy.
        case changedOnBothSides
        /// With a base: one copy changed the item and the other deleted it. The change is kept; no copy is made.
        case changedWhereDeleted
        /// Two different items now have the same primary key (SPEC.md §8.3): the newer keeps it, the other is
        /// kept as a conflict copy and its own id deleted.
        case primaryKeyTaken
    }

    /// What kind of conflict it was.
    public let kind: Kind
    /// The class of the items.
    public let itemClass: ItemClass
    /// The item that kept its place: its id.
    public let itemID: ItemID
    /// The id of the conflict copy holding the version that did not win; nil when no copy was needed
    /// (``Kind/changedWhereDeleted``) or when the copy had been dismissed before (a tombstone holds its id).
    public let copyID: ItemID?

    /// The conflict in words, e.g. "generic password 3f0c…: changed on both sides; the other version kept as 9a1b…".
    public var description: String {
        let what: String
        switch kind {
        case .changedOnBothSides: what = "changed on both sides"
        case .changedWhereDeleted: what = "changed on one side and deleted on the other; the change is kept"
        case .primaryKeyTaken: what = "another item took its primary key"
        }
        let copy = copyID.map { "; the other version kept as conflict copy \($0)" } ?? ""
        return "\(itemClass) \(itemID): \(what)\(copy)"
    }
}
