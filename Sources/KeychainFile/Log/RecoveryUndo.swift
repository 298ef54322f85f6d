/// What a recovering replay applied since the last place where something authenticated confirmed its head: kept so
/// that it can be taken back (SPEC.md §25.3, §25.4).
///
/// A record that verifies proves only that it follows the record before it. Another copy of the file, forked from the
/// same commit, holds records that verify there just as well, at the same sequence numbers and offsets; only the
/// newest commit slot's head tells the acknowledged records from those. A recovering replay that reaches the slot's
/// committed end with another head, one that verified, takes back what it applied since the last head confirmed (the
/// last rewrite's end, or the older commit slot's end when its head agrees), and names each item it puts back.
///
/// A head confirms only what is linked to it by records that verified: past a record that did not, or bytes skipped,
/// the link is unproven (`linkUnproven(at:)`), and the items changed before it are named, unconfirmed, though kept.
///
/// ```swift
/// var undo = RecoveryUndo()
/// undo.start(at: position)
/// undo.note(id, at: offset, index: index, tombstones: outcome.tombstones, groups: outcome.tombstoneGroups)
/// let restored = undo.takeBack(index: &index, tombstones: &outcome.tombstones, groups: &outcome.tombstoneGroups)
/// ```
struct RecoveryUndo {
    /// Whether changes are noted: from the last rewrite's end on. The records before it are the rewrite's, written
    /// once in their epoch, so no other copy holds others that verify there.
    private(set) var isActive = false
    /// The log offset from which changes are noted.
    private(set) var since = 0
    /// Each noted item as it was at `since` (`nil`: absent).
    private var items: [ItemID: StoredItem?] = [:]
    /// Each noted item's tombstone time and group at `since`.
    private var tombstones: [ItemID: (time: Int64?, keyID: UInt8?)] = [:]
    /// The noted items, in the order first changed.
    private(set) var touched: [ItemID] = []
    /// The log offset of the record or page that last changed each noted item. Offsets, not the order applied: a
    /// version 3 page held behind damage is applied later than it was read.
    private var lastChange: [ItemID: Int] = [:]
    /// The latest log offset since `since` where the chain's link could not be checked — past a record or page that
    /// did not verify, or bytes skipped to the next record that reads: nothing after it can confirm what came before
    /// it, since the bytes that link the two are not authenticated.
    private(set) var lastBreak: Int? = nil

    /// Starts noting afresh at `offset`, a place whose head is confirmed: what was applied before it stays.
    mutating func start(at offset: Int) {
        isActive = true
        since = offset
        items = [:]
        tombstones = [:]
        touched = []
        lastChange = [:]
        lastBreak = nil
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
    /// unless it was noted since the last start.
    mutating func note(_ id: ItemID, at offset: Int, index: ItemIndex, tombstones current: [ItemID: Int64], groups: [ItemID: UInt8]) {
        guard isActive else { return }
        lastChange[id] = max(lastChange[id] ?? offset, offset)
        guard items.index(forKey: id) == nil else { return }
        items[id] = .some(index[id])
        tombstones[id] = (current[id], groups[id])
        touched.append(id)
    }

    /// Puts every noted item and tombstone back as it was at `since`: the items put back, in the order first changed.
    mutating func takeBack(index: inout ItemIndex, tombstones current: inout [ItemID: Int64], groups: inout [ItemID: UInt8]) -> [ItemID] {
        // Every noted item is taken out before any is put back, so that no primary key is held twice on the way.
        for id in touched { index.restore(id, to: nil) }
        for id in touched {
            if case .some(.some(let original)) = items[id] { index.restore(id, to: original) }
        }
        for (id, was) in tombstones {
            current[id] = was.time
            groups[id] = was.keyID
        }
        let restored = touched
        start(at: since)
        return restored
    }
}
