/// A page's entries as a recovering read applies them (SPEC.md §37.6), copied out of the bytes read, so that a page
/// opened past damage to its group's chain can be held until a commit's heads confirm its place
/// (``RecoveringChainV3``).
struct PageEntriesV3 {
    /// The page's offset in the log (before ``HealingLayout/physical(_:)``): where damage it causes is listed.
    let offset: Int
    /// The puts and deletions, in order.
    var entries: [DecodedEntry] = []
    /// Each deletion's and tombstone's item and time.
    var deletions: [(ItemID, Int64)] = []
    /// Every put, deletion and tombstone in order, with its page's key id: `entries` are its puts and deletions.
    var placements: [(id: ItemID, keyID: UInt8, kind: ReplayedRecordV2.Placement)] = []
    /// The items whose last put in the page has a secret box that does not authenticate, with no later entry of the
    /// page naming them: their latest version is lost, so they are taken out after the entries, never served at an
    /// older version.
    var damagedPuts: [ItemID] = []
    /// Its place among the pages waiting to be applied, while it is held (``HeldPagesV3``).
    var ticket = 0
    /// The sequence number of its record: a record's pages are applied together where they can be.
    var record: UInt64 = 0
    /// The key id of its group.
    var keyID: UInt8 = 0

    init(offset: Int) {
        self.offset = offset
    }

    /// The items the page puts, deletes or keeps a tombstone of, each once, in order.
    var itemIDs: [ItemID] {
        var seen = Set<ItemID>()
        return (placements.map(\.id) + damagedPuts).filter { seen.insert($0).inserted }
    }
}
