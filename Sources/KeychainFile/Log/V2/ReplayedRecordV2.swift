/// A version 2 record verified for replay (``RecordV2PagesDecoder``): its entries as the index applies them,
/// each put's attributes and secret box already in the one block the index will keep for the item.
struct ReplayedRecordV2 {
    let kind: RecordV2.Kind
    let sequence: UInt64
    let part: UInt32
    let chain: [UInt8]
    /// Where the record ends, in the bytes it was decoded from.
    let end: Int
    /// The puts and deletions, in page and entry order.
    var entries: [DecodedEntry]
    /// The digests of each put in `entries`, at its index (`nil` for a deletion).
    var digests: [ItemDigests?]
    /// The deletions and tombstones with their times, in order.
    var deletionTimes: [(ItemID, Int64)]
    /// Version 3: a rule of Docs/FormatVersion3.md §2.11 the record breaks although it authenticated (a put in
    /// another group's page), in words; the replay refuses it as `corrupted` wherever it lies.
    var violation: String? = nil
    /// Version 3: each put, deletion and tombstone in record order, with the key id of the page that holds it.
    var placements: [(id: ItemID, keyID: UInt8, kind: Placement)] = []
    /// Version 3: a commit's heads, every group's — those the reader does not follow too, which a scoped writer
    /// carries into its own commits (Docs/FormatVersion3.md §2.6).
    var heads: HeadsV3? = nil
    /// Version 3, a scoped holder: the segments of groups it does not follow, in record order, as their bytes.
    var opaque: [OpaqueSegmentV3] = []
    /// Version 3, a scoped holder's recovering read (``OtherHeadsCheckV3/report``): how the commit's heads disagree
    /// with the segments of a group it does not follow, in words.
    var otherHeadsMismatch: String? = nil

    /// What a version 3 entry does to its item's place in a group.
    enum Placement {
        case put, delete, tombstone
    }
}
