/// Verifies and decodes a version 3 record for replay (Docs/FormatVersion3.md §2.5.1, §2.10): the record as
/// ``RecordV3Decoder`` verifies it, its pages' entries made as the index applies them — each put's attributes and
/// secret box in the one block the index keeps — in segment and entry order, as ``RecordV2PagesDecoder`` makes
/// version 2's.
///
/// A full credential follows every group of the key table; a segment or a head of a key id it does not follow is a
/// group the table does not hold, and so `corrupted`, never skipped (Docs/FormatVersion3.md §2.10).
///
/// ```swift
/// var groups: [UInt8: GroupChainV3] = [1: GroupChainV3(keys: defaultGroup, startEpoch: header.epoch)]
/// let record = try RecordV3ReplayDecoder.decode(
///     window, at: 0, previousChain: c0, keys: recordKeys, groupNames: [1: ""], groups: &groups)
/// ```
enum RecordV3ReplayDecoder {
    /// Decodes the record at `offset` of `bytes`.
    ///
    /// - Parameters:
    ///   - groupNames: the name of each group followed, by key id: a put in a group's page names that group (§2.11).
    ///   - followsEveryGroup: a full holder's replay, for which every group there is is followed; `false` for a scoped
    ///     holder, which keeps other groups' segments as their bytes (§2.3).
    ///   - groups: the chains of the groups followed, before this record; moved past it when it verifies,
    ///     unchanged when this throws.
    ///   - others: a scoped holder's count of each other group's segments and their last page tag, checked against
    ///     each commit's heads (§2.6); moved past this record when it verifies. A full holder's stays empty.
    ///   - otherHeads: how a commit's heads are held against `others` (``OtherHeadsCheckV3``).
    /// - Throws: what ``RecordV3Decoder/decode(_:at:previousChain:keys:groups:)`` throws, its offsets made offsets in
    ///   `bytes`; `.corrupted` for a segment or a head of a group the reader does not follow. A put whose access
    ///   group is not its page's is the record's ``ReplayedRecordV2/violation``: it authenticated, so no damage made
    ///   it, and the replay refuses it wherever it lies rather than setting it aside as a torn commit.
    static func decode(
        _ bytes: [UInt8], at offset: Int, previousChain: [UInt8], keys: RecordKeysV3, groupNames: [UInt8: String],
        followsEveryGroup: Bool = true, groups: inout [UInt8: GroupChainV3], others: inout [UInt8: OpaqueChainV3],
        otherHeads: OtherHeadsCheckV3 = .refuse
    ) throws(KeychainError) -> ReplayedRecordV2 {
        var chains = groups
        let decoded: DecodedRecordV3
        do {
            decoded = try RecordV3Decoder.decode(bytes, at: offset, previousChain: previousChain, keys: keys, groups: &chains)
        } catch .corrupted(let at, let reason) {
            throw .corrupted(offset: offset + at, reason: reason)
        } catch .unsupportedFeature(let at, let reason) {
            throw .unsupportedFeature(offset: offset + at, reason: reason)
        }
        // A full credential follows every group of the key table, which names every group there is (§2.10).
        for head in decoded.heads?.groups ?? [] where followsEveryGroup && chains[head.keyID] == nil {
            throw .corrupted(
                offset: offset, reason: "record \(decoded.sequence): its heads name key id \(head.keyID), a group this keychain's key table does not hold")
        }
        var record = ReplayedRecordV2(
            kind: decoded.kind, sequence: decoded.sequence, part: decoded.part, chain: decoded.chainTag, end: decoded.end,
            entries: [], digests: [], deletionTimes: [])
        record.heads = decoded.heads
        for segment in decoded.segments {
            guard case .page(let page) = segment else {
                guard case .opaque(let opaque) = segment, followsEveryGroup else { continue }
                throw .corrupted(
                    offset: offset, reason: "record \(decoded.sequence): a segment of key id \(opaque.keyID), a group this keychain's key table does not hold")
            }
            for entry in page.entries {
                switch entry {
                case .put(let id, let attributes, let box):
                    let name = AccessGroupsV3.name(of: attributes)
                    if groupNames[page.keyID] != name, record.violation == nil {
                        record.violation = "record \(decoded.sequence): a page of key id \(page.keyID) puts item \(HexText.lowercase(id.bytes)), whose access group is \"\(name)\" — another group's"
                    }
                    record.entries.append(RecordV2PagesDecoder.put(id, attributes, box: box, in: bytes))
                    record.placements.append((id, page.keyID, .put))
                    record.digests.append(ItemDigests(id: id, attributes: attributes))
                case .delete(let id, let time):
                    record.entries.append(.delete(id: id))
                    record.digests.append(nil)
                    record.deletionTimes.append((id, time))
                    record.placements.append((id, page.keyID, .delete))
                case .tombstone(let id, let time):
                    record.deletionTimes.append((id, time))
                    record.placements.append((id, page.keyID, .tombstone))
                }
            }
        }
        if !followsEveryGroup {
            (others, record.otherHeadsMismatch) = try Self.others(
                after: decoded, at: offset, followed: chains, others: others, keys: keys, check: otherHeads)
            record.opaque = decoded.segments.compactMap { if case .opaque(let opaque) = $0 { return opaque } else { return nil } }
        }
        groups = chains
        return record
    }

    /// A scoped holder's count of the other groups' segments moved past `record`, checked at a commit against its
    /// heads: every head of a group the holder does not follow, every such group with segments, and every such group
    /// an earlier commit named (kept from then on, segments or not: a group is never removed).
    private static func others(
        after record: DecodedRecordV3, at offset: Int, followed: [UInt8: GroupChainV3], others: [UInt8: OpaqueChainV3], keys: RecordKeysV3,
        check: OtherHeadsCheckV3
    ) throws(KeychainError) -> (others: [UInt8: OpaqueChainV3], mismatch: String?) {
        var moved = others
        var here: Set<UInt8> = []
        for case .opaque(let opaque) in record.segments {
            here.insert(opaque.keyID)
            moved[opaque.keyID, default: OpaqueChainV3(keyID: opaque.keyID, startEpoch: keys.startEpoch(of: opaque.keyID), watching: keys.watchedPages[opaque.keyID])]
                .advance(pageTag: opaque.bytes[opaque.segment.pageTag], byteCount: opaque.bytes.count)
        }
        guard let heads = record.heads else { return (moved, nil) }
        if check == .anchor {
            return (try anchored(moved, segmentsHere: here, to: heads, of: record.sequence, at: offset, followed: followed, keys: keys), nil)
        }
        let named = Set(heads.groups.map(\.keyID)).union(moved.keys).filter { followed[$0] == nil }
        var mismatch: String? = nil
        for keyID in named.sorted() {
            let chain = moved[keyID] ?? OpaqueChainV3(keyID: keyID, startEpoch: keys.startEpoch(of: keyID), watching: keys.watchedPages[keyID])
            do {
                try chain.check(against: heads, at: 0)
            } catch .corrupted(_, let reason) {
                guard check == .report else { throw .corrupted(offset: offset, reason: "record \(record.sequence): \(reason)") }
                mismatch = mismatch ?? "record \(record.sequence): \(reason)"
            }
            moved[keyID] = chain
        }
        return (moved, mismatch)
    }

    /// The count set again from `heads` past damage (``OtherHeadsCheckV3/anchor``), `counted` being what the segments
    /// read still show: at least that far, in the same chains.
    static func anchored(
        _ counted: [UInt8: OpaqueChainV3], segmentsHere: Set<UInt8>, to heads: HeadsV3, of sequence: UInt64, at offset: Int,
        followed: [UInt8: GroupChainV3], keys: RecordKeysV3
    ) throws(KeychainError) -> [UInt8: OpaqueChainV3] {
        var anchored: [UInt8: OpaqueChainV3] = [:]
        for head in heads.groups where followed[head.keyID] == nil {
            guard head.startEpoch == keys.startEpoch(of: head.keyID) else {
                throw .corrupted(
                    offset: offset, reason: "record \(sequence): the heads say group \(head.keyID)'s chain began in epoch \(head.startEpoch), the header says \(keys.startEpoch(of: head.keyID))")
            }
            anchored[head.keyID] = OpaqueChainV3(anchoredAt: head, watching: keys.watchedPages[head.keyID])
        }
        for (keyID, chain) in counted where followed[keyID] == nil {
            guard let head = heads[keyID] else {
                throw .corrupted(offset: offset, reason: "record \(sequence): the heads no longer name group \(keyID), which the file named or held segments of")
            }
            guard head.groupSequence >= chain.sequence else {
                throw .corrupted(
                    offset: offset, reason: "record \(sequence): the heads put group \(keyID) at page \(head.groupSequence), behind the \(chain.sequence) segments of it read")
            }
            if segmentsHere.contains(keyID), !ChainTagV3.matches(head.lastTag, chain.lastTag) {
                throw .corrupted(
                    offset: offset, reason: "record \(sequence): group \(keyID) has segments here, and the heads do not name the last one's tag")
            }
        }
        return anchored
    }
}
