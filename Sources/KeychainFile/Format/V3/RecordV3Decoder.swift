@_spi(KeychainFileInternals) import KeychainCrypto

/// Reads format version 3 records (Docs/FormatVersion3.md §2.5.1) as any holder of the log key does: the frame and
/// its check, the segments with every length checked before use, the chain tag over every segment, the heads; then
/// the pages of the groups whose chains the reader follows (it holds their keys), each as the next page of its
/// group's chain, and at a commit each such chain against its head. Every other group's segments are kept as their
/// bytes, for a rewrite to copy.
///
/// Errors are `.corrupted(offset:reason:)` with offsets within the record (the caller adds the record's offset in
/// the file), or `.unsupportedFeature` for a kind or page encoding a newer writer may use; nothing traps on any
/// input.
///
/// ```swift
/// var groups: [UInt8: GroupChainV3] = [2: GroupChainV3(keys: keysB, startEpoch: 1)]
/// let record = try RecordV3Decoder.decode(bytes, previousChain: c0, keys: recordKeys, groups: &groups)
/// record.segments; record.heads; record.chainTag; record.end
/// ```
enum RecordV3Decoder {
    /// Reads the record at `start` in `bytes` up to its frame check and the placement of its heads, without keys.
    ///
    /// - Throws: `.corrupted` for a record that does not hold together — the length check, a body length out of
    ///   72 … 16 MiB or past the bytes, a segment count out of 1 … ⌊(L − 35) / 37⌋, a segment's lengths out of bounds
    ///   or past the chain tag, bytes between the last segment and the chain tag, the frame check; and, the frame
    ///   being as written, a commit whose last segment is not its only heads segment or a part with a heads segment.
    ///   `.unsupportedFeature` for another record kind in a frame whose check passes.
    static func scan(_ bytes: [UInt8], at start: Int = 0) throws(KeychainError) -> ScannedRecordV3 {
        func corrupted(_ at: Int, _ reason: String) -> KeychainError { .corrupted(offset: at - start, reason: "record: \(reason)") }
        guard start >= 0, start <= bytes.count else {
            throw .corrupted(offset: 0, reason: "record: offset \(start) is outside the \(bytes.count) bytes given")
        }
        var reader = ByteReader(bytes, range: start..<bytes.count)
        do {
            let length = Int(try reader.readUInt32("body length"))
            let check = try reader.readUInt32("length check")
            guard UInt32(length) ^ 0xFFFF_FFFF == check else { throw corrupted(start, "the length check does not match the body length") }
            guard length >= RecordV3.minimumBodyLength, length <= RecordV3.maximumBodyLength else {
                throw corrupted(start, "body length \(length) is outside \(RecordV3.minimumBodyLength) … \(RecordV3.maximumBodyLength)")
            }
            let end = start + 8 + length
            guard end <= bytes.count else { throw corrupted(start, "the body runs \(end - bytes.count) bytes past the bytes given") }
            reader = ByteReader(bytes, range: (start + 8)..<end)
            let rawKind = try reader.readUInt8("kind")
            let sequence = try reader.readUInt64("sequence")
            let part = try reader.readUInt32("part")
            let count = Int(try reader.readUInt16("segment count"))
            let frameCheck = try reader.readRange(RecordV3.frameCheckSize, "frame check")
            guard count >= 1, count <= RecordV3.segmentCountLimit(bodyLength: length) else {
                throw corrupted(start + RecordV3.segmentCountOffset, "segment count \(count) does not fit a body of \(length) bytes (1 … \(RecordV3.segmentCountLimit(bodyLength: length)))")
            }
            let segmentsEnd = end - ChainTagV3.size
            var segments: [SegmentV3] = []
            segments.reserveCapacity(count)
            var headers: [UInt8] = []
            headers.reserveCapacity(count * RecordV3.segmentHeaderSize)
            var offset = start + RecordV3.frameSize
            for index in 0..<count {
                let segment = try SegmentV3.read(bytes, at: offset, limit: segmentsEnd, base: start, index: index)
                headers += bytes[offset..<(offset + RecordV3.segmentHeaderSize)]
                segments.append(segment)
                offset = segment.range.upperBound
            }
            guard offset == segmentsEnd else {
                throw corrupted(offset, "\(segmentsEnd - offset) bytes between the last of \(count) segments and the chain tag")
            }
            guard RecordV3.frameCheck(frame: bytes[start..<(start + RecordV3.frameCheckOffset)], segmentHeaders: headers).elementsEqual(bytes[frameCheck]) else {
                throw corrupted(start, "the frame check does not match: the record's frame or a segment's header is damaged")
            }
            // The frame check passed: what follows is as written, by a writer that may know more than this one.
            guard let kind = RecordV2.Kind(rawValue: rawKind) else {
                throw KeychainError.unsupportedFeature(offset: 8, reason: "record: kind \(rawKind) (this version reads kinds 1 and 3)")
            }
            let headsAt = segments.indices.filter { segments[$0].keyID == RecordV3.headsKeyID }
            switch kind {
            case .commit:
                guard headsAt == [count - 1] else {
                    throw corrupted(segments[headsAt.first { $0 != count - 1 } ?? count - 1].range.lowerBound,
                                    "a commit ends with its one heads segment (key id 0); this one has \(headsAt.count), at segments \(headsAt)")
                }
                guard segments[count - 1].secrets.isEmpty else {
                    throw corrupted(segments[count - 1].range.lowerBound + 1, "the heads segment holds \(segments[count - 1].secrets.count) bytes after its box")
                }
            case .part:
                if let first = headsAt.first { throw corrupted(segments[first].range.lowerBound, "a transaction part holds a heads segment (key id 0) at segment \(first)") }
            }
            return ScannedRecordV3(start: start, end: end, kind: kind, sequence: sequence, part: part, segments: segments)
        } catch let error as KeychainError {
            throw error
        } catch let underflow as ByteReader.Underflow {
            throw corrupted(underflow.offset, "truncated \(underflow.field)")
        } catch {
            throw corrupted(start, "\(error)")
        }
    }

    /// Decodes and verifies the record at `start` in `bytes`.
    ///
    /// - Parameters:
    ///   - previousChain: the chain tag of the record before (the epoch's initial value for its first).
    ///   - keys: the log side's keys.
    ///   - groups: the chains of the groups the reader follows, by key id, as they stand before this record; moved
    ///     past this record's pages when it verifies, unchanged when it throws.
    /// - Throws: what ``scan(_:at:)`` throws; `.corrupted` when the chain tag does not match, the heads do not open or
    ///   hold together, a commit holds a segment of a group its heads do not name, a followed group's page is not the
    ///   next of its chain or does not parse (naming the group's key id), or, at a commit, a followed group's chain
    ///   does not end at its head.
    static func decode(
        _ bytes: [UInt8], at start: Int = 0, previousChain: [UInt8], keys: RecordKeysV3, groups: inout [UInt8: GroupChainV3]
    ) throws(KeychainError) -> DecodedRecordV3 {
        let scanned = try scan(bytes, at: start)
        let expected = ChainTagV3.compute(chainKey: keys.chainKey, previousChain: previousChain, bytes: bytes, start: start, segments: scanned.segments)
        guard ChainTagV3.matches(bytes[scanned.chainTag], expected) else {
            throw .corrupted(offset: scanned.chainTag.lowerBound - start, reason: "record: the chain tag does not match: the record, or its place after the record before, is not what was written")
        }
        var heads: HeadsV3? = nil
        if let segment = scanned.heads {
            let opened = try HeadsV3.open(bytes, box: segment.pageBox, keys: keys, sequence: scanned.sequence, base: start)
            for group in scanned.groupSegments where opened[group.keyID] == nil {
                throw .corrupted(offset: group.range.lowerBound - start, reason: "record: a segment of group \(group.keyID), which the commit's heads do not name")
            }
            heads = opened
        }
        var chains = groups
        var segments: [DecodedSegmentV3] = []
        segments.reserveCapacity(scanned.groupSegments.count)
        for (index, segment) in scanned.groupSegments.enumerated() {
            guard var chain = chains[segment.keyID] else {
                segments.append(.opaque(OpaqueSegmentV3(segment, in: bytes)))
                continue
            }
            let entries = try chain.open(segment, in: bytes, base: start, place: "segment \(index)")
            segments.append(.page(OpenedPageV3(keyID: segment.keyID, groupSequence: chain.sequence, tag: chain.lastTag, entries: entries, segment: segment.range)))
            chains[segment.keyID] = chain
        }
        if let heads, let box = scanned.heads {
            for chain in chains.values.sorted(by: { $0.keys.keyID < $1.keys.keyID }) {
                try chain.check(against: heads, at: box.range.lowerBound - start)
            }
        }
        groups = chains
        return DecodedRecordV3(
            kind: scanned.kind, sequence: scanned.sequence, part: scanned.part, segments: segments, heads: heads,
            chainTag: Array(bytes[scanned.chainTag]), end: scanned.end)
    }

    /// Decodes as a reader that follows no group: every group segment kept as its bytes.
    static func decode(_ bytes: [UInt8], at start: Int = 0, previousChain: [UInt8], keys: RecordKeysV3) throws(KeychainError) -> DecodedRecordV3 {
        var none: [UInt8: GroupChainV3] = [:]
        return try decode(bytes, at: start, previousChain: previousChain, keys: keys, groups: &none)
    }
}
