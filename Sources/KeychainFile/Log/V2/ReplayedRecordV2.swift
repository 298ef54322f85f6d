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
}
