/// A version 3 record's segments found by walking its frame as far as their lengths allow, whether or not the frame
/// check passes: what a recovering read (``ReplayV2/recoverVersion3(keys:groupNames:followsEveryGroup:)``) does with a
/// record that does not verify, so that a damaged segment header costs the segments after it, not the pages before it.
///
/// Nothing here is trusted: each page found is authenticated on its own, in its group's chain, before any of it is
/// used, and the heads are opened under the heads key. Only the record's length, whose check (`L xor 0xFFFFFFFF`)
/// passed, says where the next record begins.
///
/// ```swift
/// if let walked = WalkedRecordV3.walk(window, at: 0) {
///     for segment in walked.groupSegments { /* open it as its group's next page */ }
///     if !walked.isComplete { /* walked.walkedEnd..<walked.chainTag.lowerBound could not be read */ }
/// }
/// ```
struct WalkedRecordV3: Sendable {
    let start: Int
    /// The record's end, as its checked length says.
    let end: Int
    /// The sequence number the frame states (trusted only when ``frameCheckPasses``).
    let sequence: UInt64
    /// Whether the frame check passed: the frame and every segment header are as written.
    let frameCheckPasses: Bool
    /// The group segments walked, in order.
    let groupSegments: [SegmentV3]
    /// A commit's heads segment, its last, when the walk reached it.
    let heads: SegmentV3?
    /// Where the walk stopped: the chain tag's start when every segment was walked.
    let walkedEnd: Int

    /// The chain tag's range: the record's last 16 bytes.
    var chainTag: Range<Int> { (end - ChainTagV3.size)..<end }
    /// Whether every segment the frame counts was walked, ending at the chain tag.
    var isComplete: Bool { walkedEnd == end - ChainTagV3.size }

    /// Walks the record at `start` of `bytes`; `nil` when its length check fails or the length is out of bounds or
    /// runs past `bytes`.
    static func walk(_ bytes: [UInt8], at start: Int) -> WalkedRecordV3? {
        guard start >= 0, start <= bytes.count, bytes.count - start >= RecordV3.frameSize else { return nil }
        var reader = ByteReader(bytes, range: start..<(start + RecordV3.frameSize))
        guard let length = try? Int(reader.readUInt32("body length")), let check = try? reader.readUInt32("length check"),
              UInt32(length) ^ 0xFFFF_FFFF == check, length >= RecordV3.minimumBodyLength, length <= RecordV3.maximumBodyLength,
              length <= bytes.count - start - 8,
              let kind = try? reader.readUInt8("kind"), let sequence = try? reader.readUInt64("sequence"),
              (try? reader.readUInt32("part")) != nil, let count = try? Int(reader.readUInt16("segment count"))
        else { return nil }
        let end = start + 8 + length
        let segmentsEnd = end - ChainTagV3.size
        var groupSegments: [SegmentV3] = []
        var heads: SegmentV3? = nil
        var headers: [UInt8] = []
        var offset = start + RecordV3.frameSize
        for index in 0..<count {
            guard let segment = try? SegmentV3.read(bytes, at: offset, limit: segmentsEnd, base: start, index: index) else { break }
            headers += bytes[offset..<(offset + RecordV3.segmentHeaderSize)]
            if segment.keyID != RecordV3.headsKeyID {
                groupSegments.append(segment)
            } else if kind == RecordV2.Kind.commit.rawValue, index == count - 1 {
                heads = segment
            }
            offset = segment.range.upperBound
        }
        let frameCheck = RecordV3.frameCheck(frame: bytes[start..<(start + RecordV3.frameCheckOffset)], segmentHeaders: headers)
        let passes = offset == segmentsEnd
            && frameCheck.elementsEqual(bytes[(start + RecordV3.frameCheckOffset)..<(start + RecordV3.frameSize)])
        return WalkedRecordV3(
            start: start, end: end, sequence: sequence, frameCheckPasses: passes, groupSegments: groupSegments, heads: heads,
            walkedEnd: offset)
    }
}
