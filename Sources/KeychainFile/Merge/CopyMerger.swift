/// The merge of two copies of one keychain, as item ids to entries (SPEC.md §43): a pure function, so that it
/// can be tested on many histories without files, and the same on every machine.
///
/// Without a base, each id is settled by ``join(_:_:id:keepChanges:)``: the later tombstone; each side's live
/// version unless the other side deleted the item after it (and does not hold it too); of two different live
/// versions the newer, the other kept as a conflict copy. With a base, a change on one side only is taken as it is,
/// and where both sides changed an item, a change is kept over a deletion. With a base found in the copies' logs (the
/// last commit both hold, §43.9), a change on one side only is taken, and an item both sides changed is settled as
/// without a base. After that, two live items with one primary key keep the newer, the other becoming a conflict copy.
struct CopyMerger {
    /// The merged entries and the conflicts met.
    struct Outcome {
        var result: [ItemID: MergeEntry]
        var conflicts: [MergeConflict]
    }

    /// How many rounds of primary-key collisions are settled before the merge gives up: each round's copies carry a
    /// marker that the items they could collide with lack, so a second round is already rare.
    static let maximumCollisionRounds = 16

    private var result: [ItemID: MergeEntry] = [:]
    private var conflicts: [MergeConflict] = []
    /// Copies made and not yet added, with the conflict that made each.
    private var copies: [(kind: MergeConflict.Kind, itemID: ItemID, copy: MergeVersion)] = []

    /// Merges `theirs` into `ours`, with `base` (their common ancestor) when known.
    ///
    /// - Parameter sharedHistory: `base` is the last commit the copies' logs both hold (SPEC.md §43.9), a state both
    ///   came from but not always the last they had in common: only a change made on one side since is taken from it.
    /// - Throws: `KeychainError.limitReached` when a conflict copy cannot be made or collisions do not settle.
    static func merge(
        ours: [ItemID: MergeEntry], theirs: [ItemID: MergeEntry], base: [ItemID: MergeEntry]?, sharedHistory: Bool = false
    ) throws(KeychainError) -> Outcome {
        var merger = CopyMerger()
        if let base, !sharedHistory {
            try merger.mergeThreeWay(ours: ours, theirs: theirs, base: base)
        } else {
            let (ours, oursDerived) = withDerivedTombstones(ours, against: theirs)
            let (theirs, theirsDerived) = withDerivedTombstones(theirs, against: ours)
            for id in Set(ours.keys).union(theirs.keys) {
                let (mine, other) = (ours[id] ?? MergeEntry(), theirs[id] ?? MergeEntry())
                if let before = base.map({ $0[id] ?? MergeEntry() }) {
                    // §43.9: a side still as the shared state left it changed nothing; the other side's change is taken.
                    if mine.isSame(as: before) {
                        merger.result[id] = other
                        continue
                    }
                    if other.isSame(as: before) {
                        merger.result[id] = mine
                        continue
                    }
                }
                merger.result[id] = try merger.join(
                    mine, other, id: id, keepChanges: false, derived: oursDerived.contains(id) || theirsDerived.contains(id))
            }
        }
        try merger.addCopies()
        try merger.settleCollisions()
        merger.dropCopiesOfLiveVersions()
        merger.conflicts.sort { $0.itemID.bytesPrecede($1.itemID) || ($0.itemID == $1.itemID && $0.kind.order < $1.kind.order) }
        return Outcome(result: merger.result, conflicts: merger.conflicts)
    }

    /// `side`, plus a tombstone for every untouched conflict copy that `other` holds and `side` holds nothing of,
    /// when `side`'s tombstone of the copy's item is later than the copy's version (SPEC.md §43.3): a deletion of an
    /// item also deletes the versions it followed, wherever they are kept. The tombstone's time is the version's
    /// plus one, whichever deletion implied it, so that every order of merges derives the same one. Also returns the
    /// ids given a derived tombstone.
    static func withDerivedTombstones(
        _ side: [ItemID: MergeEntry], against other: [ItemID: MergeEntry]
    ) -> ([ItemID: MergeEntry], Set<ItemID>) {
        var derived = side
        var ids: Set<ItemID> = []
        for (id, entry) in other where side[id] == nil {
            guard let copy = entry.version, let (origin, version) = ConflictCopy.original(of: copy),
                  let time = side[origin]?.tombstone, time > version.time else { continue }
            derived[id] = MergeEntry(tombstone: version.time &+ 1)
            ids.insert(id)
        }
        return (derived, ids)
    }

    private mutating func mergeThreeWay(
        ours: [ItemID: MergeEntry], theirs: [ItemID: MergeEntry], base: [ItemID: MergeEntry]
    ) throws(KeychainError) {
        for id in Set(ours.keys).union(theirs.keys) {
            let before = base[id] ?? MergeEntry()
            let mine = Self.seen(ours[id] ?? MergeEntry(), from: before)
            let other = Self.seen(theirs[id] ?? MergeEntry(), from: before)
            if mine.isSame(as: other) {
                result[id] = mine
            } else if mine.isSame(as: before) {
                result[id] = other
            } else if other.isSame(as: before) {
                result[id] = mine
            } else {
                result[id] = try join(mine, other, id: id, keepChanges: true)
            }
        }
    }

    /// A side's entry for an id as a three-way merge compares it with the base's: a side that lost a tombstone the
    /// base holds (it outlived the horizon) keeps the base's; a side without a version the base holds, and without a
    /// tombstone, deleted it at the earliest time after the base's version that it could have.
    private static func seen(_ side: MergeEntry, from base: MergeEntry) -> MergeEntry {
        var seen = side
        if seen.tombstone == nil {
            if side.version == nil, let version = base.version {
                seen.tombstone = max(version.time &+ 1, base.tombstone ?? Int64.min)
            } else {
                seen.tombstone = base.tombstone
            }
        }
        return seen
    }

    /// Settles one id both sides may hold. `keepChanges`: a three-way merge, where both sides changed the item,
    /// keeps each side's version whatever the other side's tombstone says. `derived`: one side's entry is a derived
    /// tombstone, which deletes the other side's copy but is not kept where the id stays live.
    private mutating func join(
        _ mine: MergeEntry, _ other: MergeEntry, id: ItemID, keepChanges: Bool, derived: Bool = false
    ) throws(KeychainError) -> MergeEntry {
        var tombstone: Int64? = switch (mine.tombstone, other.tombstone) {
        case (let left?, let right?): max(left, right)
        case (let left, let right): left ?? right
        }
        let left = keepChanges ? mine.version : Self.survivor(of: mine, against: other)
        let right = keepChanges ? other.version : Self.survivor(of: other, against: mine)
        if derived, left != nil || right != nil {
            tombstone = mine.version != nil ? mine.tombstone : other.tombstone
        }
        switch (left, right) {
        case (let left?, let right?):
            if left.digest == right.digest { return MergeEntry(version: left, tombstone: tombstone) }
            // An untouched conflict copy is older than every change of it: the change follows it, and no copy is made.
            let leftUntouched = ConflictCopy.original(of: left) != nil
            let rightUntouched = ConflictCopy.original(of: right) != nil
            if leftUntouched != rightUntouched {
                return MergeEntry(version: leftUntouched ? right : left, tombstone: tombstone)
            }
            let (winner, loser) = left.precedes(right) ? (right, left) : (left, right)
            copies.append((.changedOnBothSides, id, try ConflictCopy.make(of: loser)))
            return MergeEntry(version: winner, tombstone: tombstone)
        case (let version?, nil), (nil, let version?):
            if keepChanges, mine.version == nil || other.version == nil {
                conflicts.append(MergeConflict(kind: .changedWhereDeleted, itemClass: version.attributes.itemClass, itemID: id, copyID: nil))
            }
            return MergeEntry(version: version, tombstone: tombstone)
        case (nil, nil):
            return MergeEntry(tombstone: tombstone)
        }
    }

    /// A side's live version, unless the other side's tombstone is later than it and the other side does not hold it.
    private static func survivor(of side: MergeEntry, against other: MergeEntry) -> MergeVersion? {
        guard let version = side.version else { return nil }
        if let time = other.tombstone, time > version.time, !other.holdsSameVersion(as: side) { return nil }
        return version
    }

    /// Adds each conflict copy made, unless its id already holds something: the same copy, one changed since, or a
    /// tombstone (the copy was dismissed, and the same version does not come back). Lists the conflicts.
    private mutating func addCopies() throws(KeychainError) {
        for (kind, itemID, copy) in copies {
            if result[copy.id] == nil { result[copy.id] = MergeEntry(version: copy) }
            let kept = result[copy.id]?.version != nil
            conflicts.append(MergeConflict(kind: kind, itemClass: copy.attributes.itemClass, itemID: itemID, copyID: kept ? copy.id : nil))
        }
        copies.removeAll()
    }

    /// Drops each untouched conflict copy whose version is its item's live version again (a collision that no longer
    /// holds brought the item back): a tombstone one millisecond after the version, as a derived one (§43.3).
    private mutating func dropCopiesOfLiveVersions() {
        for (id, entry) in result {
            guard let copy = entry.version, let (origin, version) = ConflictCopy.original(of: copy),
                  let live = result[origin]?.version, live.digest == version.digest else { continue }
            result[id] = MergeEntry(tombstone: max(entry.tombstone ?? version.time &+ 1, version.time &+ 1))
        }
    }

    /// Two live items with one primary key: the newer keeps it, the other is deleted (its tombstone at its own time,
    /// so that a copy still holding it brings it back to the same collision) and kept as a conflict copy.
    private mutating func settleCollisions() throws(KeychainError) {
        for _ in 0..<Self.maximumCollisionRounds {
            var holders: [PrimaryKey: [MergeVersion]] = [:]
            for entry in result.values {
                guard let version = entry.version else { continue }
                holders[version.attributes.primaryKey, default: []].append(version)
            }
            var collided = false
            for versions in holders.values where versions.count > 1 {
                collided = true
                // Equal versions under two ids (two copies added the same item) tie: the greater id keeps the key.
                let ordered = versions.sorted { $0.precedes($1) || (!$1.precedes($0) && $0.id.bytesPrecede($1.id)) }
                let winner = ordered[ordered.count - 1]
                for loser in ordered.dropLast() {
                    let tombstone = max(result[loser.id]?.tombstone ?? loser.time, loser.time)
                    result[loser.id] = MergeEntry(tombstone: tombstone)
                    copies.append((.primaryKeyTaken, winner.id, try ConflictCopy.make(of: loser)))
                }
            }
            guard collided else { return }
            try addCopies()
        }
        throw .limitReached("primary-key collisions did not settle in \(Self.maximumCollisionRounds) rounds")
    }
}

extension MergeConflict.Kind {
    /// The order conflicts of one item are listed in.
    var order: Int {
        switch self {
        case .changedOnBothSides: return 0
        case .changedWhereDeleted: return 1
        case .primaryKeyTaken: return 2
        }
    }
}

extension ItemID {
    /// Whether this id's bytes come before `other`'s, compared as unsigned bytes.
    func bytesPrecede(_ other: ItemID) -> Bool {
        high != other.high ? high < other.high : low < other.low
    }
}
