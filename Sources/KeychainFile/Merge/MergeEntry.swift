/// What one copy of a keychain holds for one item id, as a merge reads it (SPEC.md §43.2): the live version, if the
/// item is live, and the time of its tombstone, if the copy keeps one — both when the item was deleted and later
/// brought back by a merge, where the tombstone still says which versions that deletion followed.
struct MergeEntry: Sendable {
    var version: MergeVersion?
    /// Milliseconds since 1970-01-01 UTC.
    var tombstone: Int64?

    init(version: MergeVersion? = nil, tombstone: Int64? = nil) {
        self.version = version
        self.tombstone = tombstone
    }

    /// Whether `other` is exactly this entry: the same version (or none) and the same tombstone (or none).
    func isSame(as other: MergeEntry) -> Bool {
        guard tombstone == other.tombstone else { return false }
        switch (version, other.version) {
        case (nil, nil): return true
        case (let left?, let right?): return left.isSame(as: right)
        default: return false
        }
    }

    /// Whether this entry holds the same version as `other` (both live).
    func holdsSameVersion(as other: MergeEntry) -> Bool {
        guard let left = version, let right = other.version else { return false }
        return left.isSame(as: right)
    }
}
