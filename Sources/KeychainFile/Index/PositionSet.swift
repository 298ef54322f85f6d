/// The item positions one digest of a ``DigestTable`` has when it has more than one: the items of a service
/// that many items share, say (the lookup index's service-only definition keeps one digest per service).
///
/// Why not `Set<UInt32>`: the standard set hashes every element with the seeded SipHash of `Hasher`, about
/// 500 instructions an insertion here, and an open of 100,000 items in 64 services inserts every item into
/// one of them (most of the cost of entering an item in the index, Docs/Performance.md). Positions are
/// small integers the index assigns, so this set spreads them with multiply-shift hashing instead: slot
/// `(a × position mod 2³²) >> (32 − log₂ capacity)` for an odd multiplier `a` drawn at random once per
/// process, which spreads any set of positions (an arithmetic progression, as a service's items often are)
/// without letting a file choose positions that pile up in one run of slots.
///
/// Open addressing with linear probing over a power-of-two capacity kept at most three quarters full and, once
/// positions are taken out, at least an eighth full (iterating reads every slot: a service emptied of most of
/// its items should not cost a scan of the slots it once needed); deletion shifts the following entries back
/// instead of leaving tombstones. An empty set allocates nothing. Equal when the positions are, whatever their
/// order; iteration is in no particular order.
struct PositionSet: Sequence, Equatable, Sendable, ExpressibleByArrayLiteral {
    /// Each slot: 0 when empty, else `position + 1`.
    private var slots: [UInt32]
    private(set) var count = 0
    /// `32 − log₂ capacity`: how far a product is shifted to give a slot.
    private var shift: UInt32

    /// The multiplier of the slot function: odd, random, the same for every set of the process.
    private static let multiplier: UInt32 = {
        var generator = SystemRandomNumberGenerator()
        return UInt32.random(in: 0...UInt32.max, using: &generator) | 1
    }()

    /// The smallest capacity; a set starts with two positions.
    private static let minimumCapacity = 8

    /// An empty set, with no slots until a position goes in.
    init() {
        slots = []
        shift = 32
    }

    init(arrayLiteral positions: UInt32...) {
        self.init()
        for position in positions { insert(position) }
    }

    var isEmpty: Bool { count == 0 }

    /// The slots, which iteration reads: 0 for an empty set, else a power of two at least 8.
    var capacity: Int { slots.count }

    /// Some position of the set (`nil` when it is empty).
    var first: UInt32? {
        for slot in slots where slot != 0 { return slot - 1 }
        return nil
    }

    /// Whether the set has `position`.
    func contains(_ position: UInt32) -> Bool {
        slot(of: position) != nil
    }

    /// Adds `position`; returns false if the set had it already.
    @discardableResult
    mutating func insert(_ position: UInt32) -> Bool {
        precondition(position < UInt32.max, "a position leaves room for the empty slot's 0")
        if slots.isEmpty { resize(capacity: Self.minimumCapacity) }
        var probe = self.probe(position)
        if probe.found { return false }
        if (count + 1) * 4 > slots.count * 3 {
            resize(capacity: slots.count * 2)
            probe = self.probe(position)
        }
        slots[probe.slot] = position + 1
        count += 1
        return true
    }

    /// Takes `position` out; returns it, or `nil` if the set did not have it.
    @discardableResult
    mutating func remove(_ position: UInt32) -> UInt32? {
        guard var hole = slot(of: position) else { return nil }
        // Backward-shift deletion, so that no probe sequence has a gap.
        let mask = slots.count - 1
        var next = (hole + 1) & mask
        while slots[next] != 0 {
            if backwardShiftMayFill(hole: hole, from: next, home: home(slots[next] - 1)) {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = 0
        count -= 1
        if slots.count > Self.minimumCapacity && count * 8 < slots.count { resize(capacity: slots.count / 2) }
        return position
    }

    func makeIterator() -> Iterator {
        Iterator(slots: slots)
    }

    struct Iterator: IteratorProtocol {
        fileprivate let slots: [UInt32]
        fileprivate var index = 0

        mutating func next() -> UInt32? {
            while index < slots.count {
                let slot = slots[index]
                index += 1
                if slot != 0 { return slot - 1 }
            }
            return nil
        }
    }

    var underestimatedCount: Int { count }

    static func == (lhs: PositionSet, rhs: PositionSet) -> Bool {
        lhs.count == rhs.count && lhs.allSatisfy { rhs.contains($0) }
    }

    // MARK: Slots

    private func home(_ position: UInt32) -> Int {
        Int((position &* Self.multiplier) >> shift)
    }

    private func slot(of position: UInt32) -> Int? {
        guard !slots.isEmpty else { return nil }
        let probe = self.probe(position)
        return probe.found ? probe.slot : nil
    }

    /// The slot holding `position` (`found`), or else the empty slot where its probe sequence ends (there is one:
    /// the set is never full). Only when the set has slots.
    private func probe(_ position: UInt32) -> (found: Bool, slot: Int) {
        let mask = slots.count - 1
        var slot = home(position)
        while true {
            let value = slots[slot]
            if value == 0 { return (false, slot) }
            if value == position &+ 1 { return (true, slot) }
            slot = (slot + 1) & mask
        }
    }

    private mutating func resize(capacity: Int) {
        let old = slots
        slots = [UInt32](repeating: 0, count: capacity)
        shift = 32 - UInt32(capacity.trailingZeroBitCount)
        let mask = capacity - 1
        for value in old where value != 0 {
            var slot = home(value - 1)
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = value
        }
    }
}

/// Backward-shift deletion in a linear-probing table (``DigestTable``, ``PositionSet``): whether the entry at
/// `next`, whose home slot is `home`, may move back into the empty slot `hole` before it. It may unless its home
/// lies cyclically in (hole, next], where moving it would put it before its home and out of its probe sequence.
@inline(__always)
func backwardShiftMayFill(hole: Int, from next: Int, home: Int) -> Bool {
    let homeAfterHole = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next)
    return !homeAfterHole
}
