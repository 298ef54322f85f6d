/// One segment to write into a version 3 record (``RecordV3Encoder``): a page to seal for a group whose key the
/// writer holds, or another group's segment copied byte for byte (a scoped rewrite's, which cannot open it).
enum SegmentInputV3: Sendable {
    /// A new page of the group: its group sequence and previous tag follow the group's head as the record goes (the
    /// head before the record, or the page sealed just before in it); a group without a head starts its chain in
    /// the record's epoch. At most one page's worth of entries: ``RecordV3Encoder/pages(_:keys:)`` splits them.
    case seal(keys: GroupKeysV3, entries: [EntryV2])
    /// A segment of a group whose head the writer keeps as it was: written exactly as it is.
    case copy(OpaqueSegmentV3)
}
