@_spi(KeychainFileInternals) import KeychainCrypto

/// Writes one format version 3 record (Docs/FormatVersion3.md §2.5.1): its segments in the order given — pages it
/// seals for the groups whose keys it is given, segments of other groups copied byte for byte — then, in a commit,
/// the heads; the frame, its check and the chain tag around them.
///
/// ```swift
/// let record = try RecordV3Encoder.encode(
///     kind: .commit, sequence: 1, part: 0, previousChain: c0,
///     segments: RecordV3Encoder.pages(entries, keys: keysA) + copiedB.map { .copy($0) },
///     heads: heads, keys: recordKeys, using: &generator)
/// ```
enum RecordV3Encoder {
    /// Encodes a record.
    ///
    /// - Parameters:
    ///   - kind: a commit ends with the heads segment; a transaction part has none.
    ///   - previousChain: the chain tag of the record before (the epoch's initial value for its first record).
    ///   - segments: in order; a part needs at least one.
    ///   - heads: every group's head before this record (the last commit's heads, moved past any parts of this
    ///     transaction written since). Pages sealed here move their group's head; copied segments leave theirs as
    ///     given, so a writer that copies a group's segments passes its head unchanged. A writer that starts a
    ///     group's chain anew (a full rewrite, or its own groups in a scoped one) passes heads without it: its chain
    ///     then begins at the group's start epoch in `keys` (the record's epoch unless a chain start entry names one).
    ///   - keys: the file id, epoch, chain key and heads key.
    /// - Returns: the record, its chain tag and the heads after it.
    /// - Throws: `.invalidParameter` for a previous chain tag other than 16 bytes, a part without segments, group keys
    ///   of another file, or a copied segment of a group the heads do not name (a commit would state no head for
    ///   it); `.limitReached` for a record over 16 MiB or 65,535 segments (the caller splits it into parts), a secret
    ///   over 1 MiB, or a group's chain past 2^64 − 1 pages; what sealing a page throws.
    static func encode<Generator: RandomNumberGenerator>(
        kind: RecordV2.Kind, sequence: UInt64, part: UInt32, previousChain: [UInt8], segments: [SegmentInputV3],
        heads: HeadsV3, keys: RecordKeysV3, using generator: inout Generator
    ) throws(KeychainError) -> EncodedRecordV3 {
        guard previousChain.count == ChainTagV3.size else { throw .invalidParameter("a previous chain tag is 16 bytes") }
        guard kind == .commit || !segments.isEmpty else { throw .invalidParameter("a transaction part holds at least one segment") }
        var heads = heads
        var written: [[UInt8]] = []
        written.reserveCapacity(segments.count + 1)
        for input in segments {
            switch input {
            case .seal(let group, let entries):
                guard group.fileID == keys.fileID else { throw .invalidParameter("group \(group.keyID)'s keys are another file's") }
                let head = heads[group.keyID]
                let next = head.map { $0.groupSequence.addingReportingOverflow(1) } ?? (partialValue: 1, overflow: false)
                guard !next.overflow else { throw .limitReached("group \(group.keyID)'s chain has 2^64 − 1 pages") }
                let startEpoch = head?.startEpoch ?? keys.startEpoch(of: group.keyID)
                let previous = head?.lastTag ?? group.startValue(epoch: startEpoch)
                let sealed = try GroupPageV3.seal(entries, keys: group, groupSequence: next.partialValue, previousTag: previous, using: &generator)
                heads = heads.setting(GroupHeadV3(keyID: group.keyID, startEpoch: startEpoch, groupSequence: next.partialValue, lastTag: sealed.tag))
                written.append(sealed.segment)
            case .copy(let segment):
                guard heads[segment.keyID] != nil else {
                    throw .invalidParameter("a copied segment of group \(segment.keyID), whose head is not given: a commit would state none for it")
                }
                written.append(segment.bytes)
            }
        }
        if kind == .commit {
            let box = try heads.seal(keys: keys, sequence: sequence, using: &generator)
            var segment = ByteWriter(capacity: RecordV3.segmentHeaderSize + box.count)
            segment.writeUInt8(RecordV3.headsKeyID)
            segment.writeUInt32(UInt32(box.count))
            segment.writeUInt32(UInt32(box.count))
            segment.writeBytes(box)
            written.append(segment.bytes)
        }
        guard written.count <= RecordV3.maximumSegmentCount else {
            throw .limitReached("a record holds at most 65,535 segments; a larger transaction is written in parts")
        }
        let bodyLength = written.reduce(RecordV3.frameSize - 8 + ChainTagV3.size) { $0 + $1.count }
        guard bodyLength <= RecordV3.maximumBodyLength else {
            throw .limitReached("the record would be more than 16 MiB; a larger transaction is written in parts")
        }
        return EncodedRecordV3(
            bytes: assemble(kind: kind.rawValue, sequence: sequence, part: part, segments: written, previousChain: previousChain, chainKey: keys.chainKey),
            chainTag: [], heads: heads).withChainTag()
    }

    /// The record around `segments` (each a whole segment: header and body), as they are: the frame, its check and
    /// the chain tag. No rule of placement or size is checked here — ``encode(kind:sequence:part:previousChain:segments:heads:keys:using:)`` keeps them.
    static func assemble(kind: UInt8, sequence: UInt64, part: UInt32, segments: [[UInt8]], previousChain: [UInt8], chainKey: SymmetricKey) -> [UInt8] {
        let bodyLength = segments.reduce(RecordV3.frameSize - 8 + ChainTagV3.size) { $0 + $1.count }
        var out = ByteWriter(capacity: 8 + bodyLength)
        out.writeUInt32(UInt32(truncatingIfNeeded: bodyLength))
        out.writeUInt32(UInt32(truncatingIfNeeded: bodyLength) ^ 0xFFFF_FFFF)
        out.writeUInt8(kind)
        out.writeUInt64(sequence)
        out.writeUInt32(part)
        out.writeUInt16(UInt16(truncatingIfNeeded: segments.count))
        out.writeBytes(RecordV3.frameCheck(frame: out.bytes, segmentHeaders: segments.flatMap { $0.prefix(RecordV3.segmentHeaderSize) }))
        var ranges: [SegmentV3] = []
        ranges.reserveCapacity(segments.count)
        for segment in segments {
            let start = out.count
            out.writeBytes(segment)
            let pageLength = segment.count >= RecordV3.segmentHeaderSize
                ? Int(segment[5]) << 24 | Int(segment[6]) << 16 | Int(segment[7]) << 8 | Int(segment[8]) : 0
            // Within the segment's bytes even when its header says otherwise (a test's forgery): never past the end.
            let pageEnd = min(start + RecordV3.segmentHeaderSize + pageLength, out.count)
            let page = min(start + RecordV3.segmentHeaderSize, pageEnd)..<pageEnd
            ranges.append(SegmentV3(keyID: segment.first ?? 0, range: start..<out.count, pageBox: page, secrets: page.upperBound..<out.count))
        }
        out.writeBytes(ChainTagV3.compute(chainKey: chainKey, previousChain: previousChain, bytes: out.bytes, start: 0, segments: ranges))
        return out.bytes
    }

    /// `entries` as pages of one group, each within version 2's page limit (8 KiB of plaintext, or one entry alone).
    static func pages(_ entries: [EntryV2], keys: GroupKeysV3) -> [SegmentInputV3] {
        guard !entries.isEmpty else { return [] }
        return RecordV2Encoder.paginate(entries).map { .seal(keys: keys, entries: Array(entries[$0])) }
    }
}

private extension EncodedRecordV3 {
    /// The record with its chain tag read from its last 16 bytes.
    func withChainTag() -> EncodedRecordV3 { EncodedRecordV3(bytes: bytes, chainTag: Array(bytes.suffix(ChainTagV3.size)), heads: heads) }
}
