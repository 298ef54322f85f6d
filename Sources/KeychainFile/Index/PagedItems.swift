/// The live items of an ``ItemIndex``, packed densely in fixed-size pages.
///
/// One large array would double its capacity when it fills, briefly holding the old and the new buffer and
/// then keeping up to twice the room it needs (a 100,000-item keychain that gains one item would move 8.8 MB
/// and keep 17.6 MB). Pages of ``pageSize`` items grow one page at a time and are never copied.
struct PagedItems: Sendable {
    /// Items per page.
    static let pageSize = 1024

    private var pages: [ContiguousArray<StoredItem>] = []
    private(set) var count = 0

    /// The item at `position` (0 ..< count).
    subscript(position: Int) -> StoredItem {
        // A borrow, not a copy: lookups read an attribute or two of many candidates, and a copy of an item
        // retains and releases its buffers.
        _read { yield pages[position / Self.pageSize][position % Self.pageSize] }
        set { pages[position / Self.pageSize][position % Self.pageSize] = newValue }
    }

    /// Adds `item` at position `count`.
    mutating func append(_ item: consuming StoredItem) {
        if count % Self.pageSize == 0 {
            var page = ContiguousArray<StoredItem>()
            page.reserveCapacity(Self.pageSize)
            pages.append(page)
        }
        pages[pages.count - 1].append(item)
        count += 1
    }

    /// Removes and returns the item at position `count - 1`. The caller checks that there is one.
    mutating func removeLast() -> StoredItem {
        let item = pages[pages.count - 1].removeLast()
        count -= 1
        if count % Self.pageSize == 0 { pages.removeLast() }
        return item
    }

    /// Makes room for the page array of `count` items (the pages themselves are made as they fill).
    mutating func reserveCapacity(_ count: Int) {
        pages.reserveCapacity((count + Self.pageSize - 1) / Self.pageSize)
    }

    /// The items for which `isIncluded` is true, in position order.
    func filter(_ isIncluded: (StoredItem) -> Bool) -> [StoredItem] {
        var result: [StoredItem] = []
        for page in pages {
            for item in page where isIncluded(item) { result.append(item) }
        }
        return result
    }
}
