/// What ``Keychain/merge(from:base:importing:)`` changed in the keychain it merged into.
///
/// For example:
/// ```swift
/// let report = try ours.merge(from: theirs, base: base)
/// print("\(report.added) added, \(report.changed) changed, \(report.deleted) deleted, \(report.conflicts.count) conflicts")
/// ```
public struct MergeReport: Sendable, Hashable {
    /// Items the keychain did not hold before, conflict copies included.
    public var added: Int = 0
    /// Items the keychain held at another version before.
    public var changed: Int = 0
    /// Items the keychain held that the merge deleted (each keeps a tombstone).
    public var deleted: Int = 0
    /// Deletions recorded for ids the keychain did not hold, or for items a merge brought back (so that a later merge
    /// knows of them).
    public var tombstones: Int = 0
    /// Items the other copy holds at a version this merge did not keep, because this keychain deleted them after that
    /// version was made (by modification times, which a machine's wrong clock can misorder: SPEC.md §43.3). Nothing
    /// was written for them; they are listed so that a deletion never overrides another copy's change unsaid.
    public var overruled: [ItemID] = []
    /// The conflicts this merge met that earlier merges had not (their conflict copies are new), ordered by item id;
    /// each kept both versions.
    public var conflicts: [MergeConflict] = []

    /// The key slots (credentials) the other copy holds, added there since the base, that were carried over: each
    /// opens the merged keychain now (format version 2; SPEC.md §43.1).
    public var credentialsCarried: Int = 0

    /// The key slots the other copy holds and this keychain does not, left out: without a base a merge cannot tell a
    /// credential added there from one removed here; a version 1 or 3 keychain, or copies under two master keys,
    /// cannot take another's slot.
    public var credentialsNotCarried: Int = 0

    /// Where the history both copies' logs share ends (a log offset), when the merge took the state there as its base:
    /// no base was given, and the copies hold the same records up to that commit (SPEC.md §43.9). A change made on
    /// one side since is then taken without a conflict copy. Nil when a base was given or the copies share no
    /// history (one was rewritten since they parted, or another keychain was imported).
    public var sharedHistoryEnd: Int? = nil

    /// Whether the merge wrote nothing: the keychain already held everything the other copy had.
    public var isUnchanged: Bool { added == 0 && changed == 0 && deleted == 0 && tombstones == 0 && credentialsCarried == 0 }

    /// Whether the merge wrote nothing and the other copy held nothing this keychain did not keep.
    public var holdsEverything: Bool { isUnchanged && overruled.isEmpty }
}
