/// What a recovering replay applied since the last place whose head is confirmed: kept so that it can be taken back
/// (SPEC.md §25.3, §25.4).
///
/// A record that verifies proves only that it follows the record before it. Another copy of the file, forked from the
/// same commit, holds records that verify there just as well, at the same sequence numbers and offsets; only the
/// newest commit slot's head tells the acknowledged records from those. A recovering replay that reaches the slot's
/// committed end with another head, one that verified, takes back what it applied since the last rewrite's end — or
/// since the older commit slot's end, when its head agreed there (``markOlderSlot(at:)``) — and names each item it
/// puts back.
///
/// A head confirms only what is linked to it by records that verified: past a record that did not, or bytes skipped,
/// the link is unproven (`linkUnproven(at:)`), and the items changed before it are named, unconfirmed, though kept.
/// The older slot's head confirms nothing: another copy's older slot reads in its place as well as this file's. It
/// only bounds what a newest head that disagrees takes back; what was changed before it is then named.
///
/// ```swift
/// var undo = RecoveryUndo()
/// undo.start(at: position)
/// undo.note(id, at: offset, index: index, tombstones: outcome.tombstones, groups: outcome.tombstoneGroups)
/// let (from, restored, unconfirmed) = undo.takeBack(index: &index, tombstones: &outcome.tombstones, groups: &outcome.tombstoneGroups)
/// ```
struct RecoveryUndo {
    /// Items as they were at one place of the log, to put back.
    private struct Snapshot {
        /// Each noted item as it was (`nil`: absent).
        var items: [ItemID: StoredItem?] = [:]
        /// Each noted item's tombstone time and group.
        var tombstones: [ItemID: (time: Int64?, keyID: UInt8?)] = [:]
        /// The noted items, in the order first changed.
        var touched: [ItemID] = []

        mutating func note(_ id: ItemID, index: ItemIndex, tombstones current: [ItemID: Int64], groups: [ItemID: UInt8]) {
            guard items.index(forKey: id) == nil else { return }
            items[id] = .some(index[id])
            tombstones[id] = (current[id], groups[id])
            touched.append(id)
        }
    }

    /// Whether changes are noted: from the last rewrite's end on. The records before it are the rewrite's, written
    /// once in their epoch, so no other copy holds others that verify there.
    private(set) var isActive = false
    /// The log offset from which changes are noted.
    private(set) var since = 0
    /// The noted items as they were at `since`.
    private var atSince = Snapshot()
    /// The log offset of the older commit slot's end, where its head agreed with the records' (``markOlderSlot(at:)``).
    private(set) var olderSlotEnd: Int? = nil
    /// The items changed after `olderSlotEnd`, as they were there.
    private var atOlderSlot = Snapshot()
    /// The items changed before `olderSlotEnd` (all the noted items while it is not set).
    private var changedBeforeOlderSlot: Set<ItemID> = []
    /// The log offset of the record or page that last changed each noted item. Offsets, not the order applied: a
    /// version 3 page held behind damage is applied later than it was read.
    private var lastChange: [ItemID: Int] = [:]
    /// The log offset of the page that took each item out because its put there lost its secret box.
    private var takenOut: [ItemID: Int] = [:]
    /// The latest log offset since `since` where the chain's link could not be checked — past a record or page that
    /// did not verify, or bytes skipped to the next record that reads: nothing after it can confirm what came before
    /// it, since the bytes that link the two are not authenticated.
    private(set) var lastBreak: Int? = nil

    /// The noted items, in the order first changed.
    var touched: [ItemID] { atSince.touched }

    /// Starts noting afresh at `offset`, a place whose head is confirmed: what was applied before it stays.
    mutating func start(at offset: Int) {
        isActive = true
        since = offset
        atSince = Snapshot()
        olderSlotEnd = nil
        atOlderSlot = Snapshot()
        changedBeforeOlderSlot = []
        lastChange = [:]
        takenOut = [:]
        lastBreak = nil
    }

    /// Notes that the older commit slot's head agrees with the records' at log offset `offset`: a newest head that
    /// disagrees takes back only what was changed after it.
    mutating func markOlderSlot(at offset: Int) {
        guard isActive, olderSlotEnd == nil else { return }
        olderSlotEnd = offset
    }

    /// Notes that the chain's link at log offset `offset` could not be checked: what lies before it is confirmed by
    /// no head read after it.
    mutating func linkUnproven(at offset: Int) {
        guard isActive else { return }
        lastBreak = max(lastBreak ?? offset, offset)
    }

    /// The noted items last changed by records or pages before the last unproven link, in the order first changed:
    /// what no head read after that link can confirm.
    var changedBeforeBreak: [ItemID] {
        guard let lastBreak else { return [] }
        return touched.filter { (lastChange[$0] ?? since) < lastBreak }
    }

    /// Notes item `id` as it is now, before a change by the record or page at log offset `offset`; its state is kept
    /// unless it was noted since the last start (or since the older slot's end).
    mutating func note(_ id: ItemID, at offset: Int, index: ItemIndex, tombstones current: [ItemID: Int64], groups: [ItemID: UInt8]) {
        guard isActive else { return }
        lastChange[id] = max(lastChange[id] ?? offset, offset)
        // A later change puts the item back: a take-back no longer keeps it out.
        if let out = takenOut[id], offset > out { takenOut[id] = nil }
        atSince.note(id, index: index, tombstones: current, groups: groups)
        if let olderSlotEnd, offset >= olderSlotEnd {
            atOlderSlot.note(id, index: index, tombstones: current, groups: groups)
        } else {
            changedBeforeOlderSlot.insert(id)
        }
    }

    /// Notes that the page at log offset `offset` took item `id` out, its put there having lost its secret box.
    mutating func noteTakenOut(_ id: ItemID, at offset: Int) {
        guard isActive else { return }
        takenOut[id] = max(takenOut[id] ?? offset, offset)
    }

    /// Puts every item changed since the older slot's end, or since `since` when its head did not agree, back as it
    /// was there — except one a page there took out for its lost secret box, which stays out, as its report says.
    ///
    /// - Returns: the place taken back from; the items put back, in the order first changed; and the items changed
    ///   before the older slot's end, when it is that place, in the order first changed: what they are listed as,
    ///   kept or put back, is what records no head confirms left.
    mutating func takeBack(
        index: inout ItemIndex, tombstones current: inout [ItemID: Int64], groups: inout [ItemID: UInt8]
    ) -> (from: Int, restored: [ItemID], unconfirmed: [ItemID]) {
        let from = olderSlotEnd ?? since
        let snapshot = olderSlotEnd == nil ? atSince : atOlderSlot
        // Every noted item is taken out before any is put back, so that no primary key is held twice on the way.
        for id in snapshot.touched { index.restore(id, to: nil) }
        for id in snapshot.touched where (takenOut[id] ?? Int.min) < from {
            if case .some(.some(let original)) = snapshot.items[id] { index.restore(id, to: original) }
        }
        for (id, was) in snapshot.tombstones {
            current[id] = was.time
            groups[id] = was.keyID
        }
        let unconfirmed = olderSlotEnd == nil ? [] : touched.filter { changedBeforeOlderSlot.contains($0) }
        let result = (from, snapshot.touched, unconfirmed)
        start(at: from)
        return result
    }
}
