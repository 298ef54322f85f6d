/// A hash table from 64-bit digests to item positions (``ItemIndex``'s places in its pages), several
/// positions per digest allowed: the id map, the lookup index and the primary-key map of an ``ItemIndex``.
///
/// Why not a `Dictionary`: a dictionary of 100,000 entries runs at 262,144 buckets (capacities are powers of
/// two and the load stays under 3/4), each holding the key and the value — 32 bytes for a digest and a bucket
/// enum, 8.4 MB per map. This table keeps 8 bytes per slot at any capacity, 1.2 MB for the same entries: a
/// 32-bit key folded from the digest and a 32-bit value, in one word, so that a probe reads one cache line
/// (with the digest and the value in arrays of their own, every probe of a table larger than the caches missed
/// twice: four fifths of the time an open spent entering items in the index).
///
/// Digests are told apart by their keys: two digests whose 64 bits fold to the same 32 share a slot and each
/// other's positions. Every caller checks each position it is given against what it looks for (an item's id,
/// its primary key, a query's values), as it must anyway for two values with one digest; among 100,000
/// digests about one pair shares a key.
///
/// Open addressing with linear probing; a key's home slot is `key × capacity / 2³²` (so the capacity need not
/// be a power of two); deletion shifts the following entries back instead of leaving tombstones, so lookups
/// never slow down as entries come and go. A key with one position keeps it in its slot; a key with several (a
/// service many items share) keeps them in a set the slot points to. The digests come from a seeded `Hasher`,
/// so their homes cannot be chosen from outside the process.
struct DigestTable: Sendable {
    /// The positions one digest has.
    enum Positions: Equatable {
        case none
        case one(Int)
        case many(PositionSet)
    }

    /// The most positions the table can tell apart: slot values keep the top bit for "see the overflow set".
    static let maximumPosition = Int(Self.overflowFlag) - 2

    /// Each slot: 0 when empty, else the key in the high 32 bits and the value in the low 32, the value being
    /// `position + 1` or `overflowFlag | k` for `overflow[k]` (never 0, so an occupied slot is never 0).
    private var slots: [UInt64] = []
    /// The sets of keys with more than one position; emptied sets are reused through `freeOverflow`.
    private var overflow: [PositionSet] = []
    private var freeOverflow: [Int] = []
    /// Occupied slots (distinct keys).
    private(set) var digestCount = 0

    private static let overflowFlag: UInt32 = 1 << 31
    /// Slots per digest at most: past 3/4 full, linear probing's unsuccessful searches grow long.
    private static let maximumLoad = 0.75

    private var capacity: Int { slots.count }

    /// The 32-bit key `digest` is kept under: its two halves XORed.
    static func key(_ digest: Int) -> UInt32 {
        let bits = UInt64(bitPattern: Int64(digest))
        return UInt32(truncatingIfNeeded: bits ^ (bits >> 32))
    }

    private static func key(ofSlot word: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: word >> 32) }
    private static func value(ofSlot word: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: word) }
    private static func slot(key: UInt32, value: UInt32) -> UInt64 { UInt64(key) << 32 | UInt64(value) }

    /// The positions `digest` has.
    func positions(_ digest: Int) -> Positions {
        guard let slot = slot(of: Self.key(digest)) else { return .none }
        let value = Self.value(ofSlot: slots[slot])
        if value & Self.overflowFlag != 0 { return .many(overflow[Int(value & ~Self.overflowFlag)]) }
        return .one(Int(value) - 1)
    }

    /// Whether `digest` has any position.
    func contains(_ digest: Int) -> Bool {
        slot(of: Self.key(digest)) != nil
    }

    /// Calls `body` with each position `digest` has (in no particular order) until it returns false.
    func forEachPosition(_ digest: Int, _ body: (Int) -> Bool) {
        switch positions(digest) {
        case .none: return
        case .one(let position): _ = body(position)
        case .many(let set):
            for position in set where !body(Int(position)) { return }
        }
    }

    /// Gives `digest` the position `position` too (no change if it has it already).
    mutating func insert(_ digest: Int, _ position: Int) {
        precondition(position >= 0 && position <= Self.maximumPosition, "an item position fits in 31 bits")
        let key = Self.key(digest)
        var probe = capacity > 0 ? self.probe(key) : nil
        if let found = probe, found.found {
            add(UInt32(position), toSlot: found.slot)
            return
        }
        if Double(digestCount + 1) > Double(capacity) * Self.maximumLoad {
            // Half again, not double: a table that just grew is half full rather than three eighths (the capacity
            // need not be a power of two), and the old and new slots held while rehashing are 2.5 times the old
            // ones rather than 3.
            rehash(capacity: max(16, capacity + capacity / 2))
            probe = self.probe(key)
        }
        guard let empty = probe else { preconditionFailure("a table that has grown has slots") }
        slots[empty.slot] = Self.slot(key: key, value: UInt32(position) + 1)
        digestCount += 1
    }

    /// Takes `position` from `digest` (no change if it does not have it).
    mutating func remove(_ digest: Int, _ position: Int) {
        guard let slot = slot(of: Self.key(digest)) else { return }
        let value = Self.value(ofSlot: slots[slot])
        if value & Self.overflowFlag == 0 {
            if Int(value) - 1 == position { vacate(slot) }
            return
        }
        let set = Int(value & ~Self.overflowFlag)
        overflow[set].remove(UInt32(truncatingIfNeeded: position))
        if overflow[set].count == 1, let last = overflow[set].first {
            overflow[set] = []
            freeOverflow.append(set)
            setValue(last + 1, ofSlot: slot)
        }
    }

    /// Moves `digest`'s position `old` to `new` (an item moved in the pages).
    mutating func move(_ digest: Int, from old: Int, to new: Int) {
        guard let slot = slot(of: Self.key(digest)) else { return }
        let value = Self.value(ofSlot: slots[slot])
        if value & Self.overflowFlag == 0 {
            if Int(value) - 1 == old { setValue(UInt32(new) + 1, ofSlot: slot) }
            return
        }
        let set = Int(value & ~Self.overflowFlag)
        if overflow[set].remove(UInt32(truncatingIfNeeded: old)) != nil { overflow[set].insert(UInt32(new)) }
    }

    /// Makes room for `count` more digests, and an eighth as many again, without rehashing. The eighth is for
    /// what follows a large record (a table reserved exactly for it would grow by half, through a rehash that
    /// briefly holds both, on the next add) and for digests an item has besides its one per table (the lookup
    /// index's, one per service, say).
    mutating func reserveCapacity(forMore count: Int) {
        let needed = Int((Double(digestCount + count + count / 8) / Self.maximumLoad).rounded(.up)) + 1
        if needed > capacity { rehash(capacity: needed) }
    }

    // MARK: Slots

    /// The home slot of `key`: the high word of `key × capacity`, uniform over the slots for uniform keys.
    private func home(_ key: UInt32) -> Int {
        Int(truncatingIfNeeded: (UInt64(key) &* UInt64(capacity)) >> 32)
    }

    /// The slot holding `key`, if any.
    private func slot(of key: UInt32) -> Int? {
        guard capacity > 0 else { return nil }
        let probe = self.probe(key)
        return probe.found ? probe.slot : nil
    }

    /// The slot holding `key` (`found`), or else the empty slot where its probe sequence ends (there is one:
    /// the table is never full). Only when the table has slots.
    private func probe(_ key: UInt32) -> (found: Bool, slot: Int) {
        var slot = home(key)
        while true {
            let word = slots[slot]
            if word == 0 { return (false, slot) }
            if Self.key(ofSlot: word) == key { return (true, slot) }
            slot = slot + 1 == capacity ? 0 : slot + 1
        }
    }

    private mutating func setValue(_ value: UInt32, ofSlot slot: Int) {
        slots[slot] = Self.slot(key: Self.key(ofSlot: slots[slot]), value: value)
    }

    private mutating func add(_ position: UInt32, toSlot slot: Int) {
        let value = Self.value(ofSlot: slots[slot])
        if value & Self.overflowFlag != 0 {
            overflow[Int(value & ~Self.overflowFlag)].insert(position)
            return
        }
        guard value - 1 != position else { return }
        let set: PositionSet = [value - 1, position]
        let index: Int
        if let free = freeOverflow.popLast() {
            overflow[free] = set
            index = free
        } else {
            overflow.append(set)
            index = overflow.count - 1
        }
        setValue(Self.overflowFlag | UInt32(index), ofSlot: slot)
    }

    /// Empties `slot` and shifts back the entries after it that may move closer to their homes, so that no
    /// probe sequence has a gap (backward-shift deletion).
    private mutating func vacate(_ slot: Int) {
        var hole = slot
        var next = slot + 1 == capacity ? 0 : slot + 1
        while slots[next] != 0 {
            if backwardShiftMayFill(hole: hole, from: next, home: home(Self.key(ofSlot: slots[next]))) {
                slots[hole] = slots[next]
                hole = next
            }
            next = next + 1 == capacity ? 0 : next + 1
        }
        slots[hole] = 0
        digestCount -= 1
    }

    private mutating func rehash(capacity newCapacity: Int) {
        let old = slots
        slots = [UInt64](repeating: 0, count: newCapacity)
        for word in old where word != 0 {
            var slot = home(Self.key(ofSlot: word))
            while slots[slot] != 0 { slot = slot + 1 == newCapacity ? 0 : slot + 1 }
            slots[slot] = word
        }
    }
}
