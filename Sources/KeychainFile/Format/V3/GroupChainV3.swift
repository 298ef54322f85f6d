/// One group's chain of pages as a holder of its key follows it through the log (Docs/FormatVersion3.md §2.5): the
/// check that catches a writer without the group key — a scoped holder of another group, who can append and
/// rewrite — dropping, repeating, reordering or replacing the group's pages.
///
/// Each page is sealed with its group sequence and the previous page's tag in its associated data, so a page opens
/// only as the very next page of the chain: page 1 after the group's start value for its start epoch, page `n + 1`
/// after page `n`'s tag. At each commit the chain must end where the commit's heads say (start epoch, group
/// sequence and last tag all equal), so that pages dropped at the end are caught too — as long as the heads are
/// the ones the group's last writer left.
///
/// What it cannot catch (§2.5, last bullet): a writer putting back an older state of the whole file, or of the group
/// alone — its older pages with the older head that matched them, which includes dropping the group's *last* pages
/// and stepping its head back to the page before them. Every step of that is a state the file once held; only a
/// process that remembers a newer head notices.
///
/// ```swift
/// var chain = try GroupChainV3(keys: keysB, startEpoch: heads[2]!.startEpoch)
/// let entries = try chain.open(segment, in: bytes, base: 0, place: "segment 0")
/// try chain.check(against: heads, at: 0)
/// ```
struct GroupChainV3: Sendable {
    let keys: GroupKeysV3
    let startEpoch: UInt64
    /// The group sequence of the last page opened; 0 before the first.
    private(set) var sequence: UInt64 = 0
    /// The last page's tag; the start value before the first page.
    private(set) var lastTag: [UInt8]
    /// For an open against a pinned head (SPEC.md §37.5): the group sequence of the pinned page,
    /// and that page's tag once the chain has passed it.
    let watchedSequence: UInt64?
    private(set) var watchedTag: [UInt8]?

    /// A chain that began in `startEpoch`, before its first page, remembering the tag of page `watchedSequence`.
    init(keys: GroupKeysV3, startEpoch: UInt64, watching watchedSequence: UInt64? = nil) {
        self.keys = keys
        self.startEpoch = startEpoch
        lastTag = keys.startValue(epoch: startEpoch)
        self.watchedSequence = watchedSequence
    }

    /// A chain known to have reached `head` (a position the caller verified before, e.g. in an earlier read).
    init(keys: GroupKeysV3, at head: GroupHeadV3) {
        self.keys = keys
        startEpoch = head.startEpoch
        sequence = head.groupSequence
        lastTag = head.lastTag
        watchedSequence = nil
    }

    /// Opens `segment` (ranges in `bytes`) as the chain's next page and moves the chain past it.
    ///
    /// - Throws: `.corrupted` naming the group's key id when it is not the next page (or does not open or parse);
    ///   the chain is then unchanged.
    mutating func open(_ segment: SegmentV3, in bytes: [UInt8], base: Int, place: String) throws(KeychainError) -> [DecodedEntryV2] {
        let (next, overflow) = sequence.addingReportingOverflow(1)
        guard !overflow else { throw .corrupted(offset: segment.range.lowerBound - base, reason: "record: \(place), group \(keys.keyID): the chain has no page after 2^64 − 1") }
        let entries = try GroupPageV3.open(bytes, segment: segment, keys: keys, groupSequence: next, previousTag: lastTag, base: base, place: place)
        sequence = next
        lastTag = Array(bytes[segment.pageTag])
        if next == watchedSequence { watchedTag = lastTag }
        return entries
    }

    /// Checks the chain's end against the group's head in `heads`, which every commit's heads hold (§2.5): the same
    /// start epoch, group sequence and last tag — for a chain without a page, group sequence 0 and the start value,
    /// which only a holder of the group key can make.
    ///
    /// - Parameter offset: where the heads are, for the error.
    /// - Throws: `.corrupted` naming the group's key id: no head (the group's pages and head dropped, or a writer that
    ///   left it out), or a chain that ends elsewhere than its head (pages dropped or added at the end, a head naming
    ///   pages the log does not hold, or the chain started anew under the writer's start epoch).
    func check(against heads: HeadsV3, at offset: Int) throws(KeychainError) {
        guard let head = heads[keys.keyID] else {
            throw .corrupted(
                offset: offset,
                reason: "record: the heads name no head for group \(keys.keyID) (\(sequence) pages so far), and every commit names every group: the group's pages and head may have been dropped")
        }
        guard head.startEpoch == startEpoch, head.groupSequence == sequence, ChainTagV3.matches(head.lastTag, lastTag) else {
            throw .corrupted(offset: offset, reason: "record: group \(keys.keyID)'s chain (begun in epoch \(startEpoch)) ends at page \(sequence), its head says page \(head.groupSequence) begun in epoch \(head.startEpoch) with another tag: pages of the group were dropped, added or replaced")
        }
    }

    /// Verifies a group's whole chain: its segments as they come in the log (within one file, possibly written in
    /// several epochs and copied by scoped rewrites), from its page 1, against the newest heads.
    ///
    /// - Parameters:
    ///   - segments: every segment of key id `keys.keyID` in the log, in order.
    ///   - heads: the newest commit's heads.
    /// - Returns: each page's entries (a put's secret box is a range in that segment's ``OpaqueSegmentV3/bytes``).
    /// - Throws: `.corrupted` naming the group's key id (offsets within the failing segment): a segment of another
    ///   key id, a page that is not the next of the chain, or a chain that does not end at its head.
    static func verify(keys: GroupKeysV3, segments: [OpaqueSegmentV3], heads: HeadsV3) throws(KeychainError) -> [[DecodedEntryV2]] {
        guard let head = heads[keys.keyID] else {
            throw .corrupted(offset: 0, reason: "record: group \(keys.keyID) has \(segments.count) pages but the heads name none")
        }
        var chain = GroupChainV3(keys: keys, startEpoch: head.startEpoch)
        var pages: [[DecodedEntryV2]] = []
        pages.reserveCapacity(segments.count)
        for (index, segment) in segments.enumerated() {
            guard segment.keyID == keys.keyID else {
                throw .corrupted(offset: 0, reason: "record: group \(keys.keyID)'s segment \(index) is of key id \(segment.keyID)")
            }
            pages.append(try chain.open(segment.segment, in: segment.bytes, base: 0, place: "the group's segment \(index)"))
        }
        try chain.check(against: heads, at: 0)
        return pages
    }
}
