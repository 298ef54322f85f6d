/// A version 3 record's frame and segments as ``RecordV3Decoder/scan(_:at:)`` found them: lengths checked, frame
/// check passed, placement of the heads checked; nothing authenticated yet.
struct ScannedRecordV3: Sendable {
    let start: Int
    let end: Int
    let kind: RecordV2.Kind
    let sequence: UInt64
    let part: UInt32
    /// Every segment in order, the heads (a commit's last) included.
    let segments: [SegmentV3]

    /// The chain tag's range: the record's last 16 bytes.
    var chainTag: Range<Int> { (end - ChainTagV3.size)..<end }

    /// The heads segment: a commit's last, none in a part.
    var heads: SegmentV3? { kind == .commit ? segments.last : nil }

    /// The group segments, in order.
    var groupSegments: ArraySlice<SegmentV3> { kind == .commit ? segments.dropLast() : segments[...] }
}
