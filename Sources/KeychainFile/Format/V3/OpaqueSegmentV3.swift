/// A group's segment as a reader without the group's key has it (Docs/FormatVersion3.md §2.3, §2.5.1): its bytes,
/// header included, to be copied byte for byte into a later record, and what the header shows — the key id, the
/// segment's length and its page box's length. Nothing else is stored or derivable without the group key: not how
/// many items, entries, secret boxes or deletions it holds, nor its group sequence.
///
/// ```swift
/// let kept = try OpaqueSegmentV3(bytes: copied)   // checked as a whole segment
/// kept.keyID; kept.segmentLength; kept.pageBoxLength
/// ```
struct OpaqueSegmentV3: Sendable, Equatable {
    /// The whole segment: u8 key id ‖ u32 S ‖ u32 P ‖ page box ‖ secret boxes; well formed (checked when made).
    let bytes: [UInt8]

    /// Takes `bytes` as one segment of a group.
    ///
    /// - Throws: `.corrupted` (offset within the segment) when they are not exactly one group segment: key id 0 (the
    ///   heads are remade by every commit, never copied), lengths out of bounds, or bytes after it.
    init(bytes: [UInt8]) throws(KeychainError) {
        let segment = try SegmentV3.read(bytes, at: 0, limit: bytes.count, base: 0, index: 0)
        guard segment.range.upperBound == bytes.count else {
            throw .corrupted(offset: segment.range.upperBound, reason: "segment: \(bytes.count - segment.range.upperBound) bytes after it")
        }
        guard segment.keyID != RecordV3.headsKeyID else { throw .corrupted(offset: 0, reason: "segment: key id 0 is the heads, which are not copied") }
        self.bytes = bytes
    }

    /// A segment a scan of a record found (its lengths already checked).
    init(_ segment: SegmentV3, in bytes: [UInt8]) {
        self.bytes = Array(bytes[segment.range])
    }

    var keyID: UInt8 { bytes[0] }
    /// `S`: the bytes after the 9-byte header.
    var segmentLength: Int { bytes.count - RecordV3.segmentHeaderSize }
    /// `P`: the page box's bytes.
    var pageBoxLength: Int { Int(bytes[5]) << 24 | Int(bytes[6]) << 16 | Int(bytes[7]) << 8 | Int(bytes[8]) }

    /// The segment's ranges within ``bytes``.
    var segment: SegmentV3 {
        let page = RecordV3.segmentHeaderSize..<(RecordV3.segmentHeaderSize + pageBoxLength)
        return SegmentV3(keyID: keyID, range: 0..<bytes.count, pageBox: page, secrets: page.upperBound..<bytes.count)
    }
}
