/// The pages a recovering read of a version 3 log has opened and not yet applied, in log order (SPEC.md §37.6).
///
/// A page that opens past damage to its chain is held until a commit's heads confirm or drop it
/// (``RecoveringChainV3``). Every page opened after it, of any group, waits behind it, so that entries apply in the
/// order they were written: a move's deletion in one group before its put in the other, an item's update before a
/// later one.
///
/// ```swift
/// var pages = HeldPagesV3()
/// let ticket = pages.hold(pageOfA)        // past damage to A's chain
/// pages.append(pageOfB)                   // B's chain is proven, but the page waits behind A's
/// pages.resolve([ticket], confirmed: true)
/// for page in pages.takeResolved() { apply(page) }   // A's page, then B's
/// ```
struct HeldPagesV3 {
    private enum State {
        case held
        case confirmed
        case dropped
    }

    private var pages: [PageEntriesV3] = []
    private var states: [State] = []
    /// The ticket of `pages[0]`: tickets count every page ever added, so that dropping taken pages keeps them.
    private var base = 0
    /// The first page in `pages` not yet taken.
    private var first = 0

    /// Whether no page waits.
    var isEmpty: Bool { first == pages.count }

    /// Adds a page that waits for its chain's heads: its ticket, for ``resolve(_:confirmed:)``.
    mutating func hold(_ page: PageEntriesV3) -> Int {
        pages.append(page)
        states.append(.held)
        return base + pages.count - 1
    }

    /// Adds a page to apply once every page before it is confirmed or dropped.
    mutating func append(_ page: PageEntriesV3) {
        pages.append(page)
        states.append(.confirmed)
    }

    /// Confirms, or drops, the held pages with these tickets.
    mutating func resolve(_ tickets: [Int], confirmed: Bool) {
        for ticket in tickets {
            let position = ticket - base
            guard position >= first, position < states.count, states[position] == .held else { continue }
            states[position] = confirmed ? .confirmed : .dropped
        }
    }

    /// Takes the pages from the front up to the first still held: the confirmed ones, to apply in this order.
    mutating func takeResolved() -> [PageEntriesV3] {
        var taken: [PageEntriesV3] = []
        while first < pages.count, states[first] != .held {
            if states[first] == .confirmed { taken.append(pages[first]) }
            first += 1
        }
        // The pages taken are let go once they are most of what is kept.
        if first > 0, first * 2 >= pages.count {
            pages.removeFirst(first)
            states.removeFirst(first)
            base += first
            first = 0
        }
        return taken
    }
}
