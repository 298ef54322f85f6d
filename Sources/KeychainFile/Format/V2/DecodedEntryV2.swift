/// A verified entry of a format version 2 record. A put's secret stays sealed: its box's place in the record's
/// bytes, whose digest (which the page names) and tag the decoder checked; it is decrypted only when asked for.
enum DecodedEntryV2: Sendable, Equatable {
    case put(id: ItemID, attributes: ItemAttributes, secretBox: Range<Int>)
    case delete(id: ItemID, time: Int64)
    case tombstone(id: ItemID, time: Int64)
}
