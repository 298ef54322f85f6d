/// A version 3 record that ``RecordV3Decoder/decode(_:at:previousChain:keys:groups:)`` verified: its chain tag
/// against the record before, its heads, and the pages of the groups the reader follows.
struct DecodedRecordV3: Sendable {
    let kind: RecordV2.Kind
    let sequence: UInt64
    let part: UInt32
    /// The group segments in order (the heads are in ``heads``).
    let segments: [DecodedSegmentV3]
    /// A commit's heads; `nil` for a transaction part.
    let heads: HeadsV3?
    /// The record's chain tag: the next record's previous chain tag.
    let chainTag: [UInt8]
    /// Where the record ends in the bytes decoded.
    let end: Int
}
