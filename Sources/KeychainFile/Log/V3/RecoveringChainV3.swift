/// One group's chain of pages as a recovering read follows it past damage (SPEC.md §37.6): pages that open are
/// applied, and a page that does not is lost alone, never the rest of its group.
///
/// A page opens only as its chain's next page: its group sequence and the tag of the page before are in its
/// associated data (``GroupChainV3``). Past a lost page the chain goes on from that page's tag as the file holds it,
/// so the next page opens unless the damage hit that tag too. Past a region whose records cannot be read at all, the
/// group's next page opens if the region held none of the group's pages; otherwise it is lost too (the tag before it
/// was in the region), and the page after it is tried at each group sequence the region's size allows. A commit's
/// heads, when they open, put the chain back where its writer left it.
///
/// A page's place proves nothing once its chain has passed damage: a page's associated data names no epoch, so an
/// older copy's page of the group, spliced in after bytes whose last 16 name its previous tag, opens there. Pages that
/// open past damage are therefore held (``held``) until a commit's heads agree with the chain after them, and are
/// dropped, for the caller to name, when heads disagree or the log ends first. Heads that would put the chain behind
/// a page that opened at a proven place are refused: no writer makes them.
///
/// ```swift
/// var chain = RecoveringChainV3(GroupChainV3(keys: keysB, startEpoch: 1))
/// var damaged: [DamagedSecretV3]? = []
/// if let entries = chain.open(segment, in: bytes, place: "record 4, segment 0", damagedSecrets: &damaged) { apply(entries) }
/// ```
struct RecoveringChainV3 {
    let keys: GroupKeysV3
    let startEpoch: UInt64
    /// The group sequence of the last page passed: opened, or lost and stepped over.
    private(set) var sequence: UInt64
    /// That page's tag as the file holds it: authenticated when the page opened, as read when it was lost.
    private(set) var lastTag: [UInt8]
    /// How many more pages than one may lie between the last page passed and the next: the next page's group
    /// sequence is one of `sequence + 1 … sequence + 1 + uncertainty`.
    private(set) var uncertainty: UInt64 = 0
    /// How many pages a region lost since the last page passed may have held: the uncertainty if the next page
    /// proves the group had some there (it does not open as the very next page).
    private var pendingUncertainty: UInt64 = 0
    /// Whether a page of the group, or a region that may have held one, was lost since the chain was last put at a
    /// commit's head: a head that then disagrees with the chain is what that damage already reported.
    private(set) var lostSinceHeads = false
    /// Whether the chain is at a place proven: every page passed since it was put at heads (or at the replay's start)
    /// opened. Pages that open when it is not are held.
    private(set) var isProven = true
    /// The last place proven: the group sequence and tag of the last page that opened while the chain was proven,
    /// or of the heads it was put at.
    private(set) var provenSequence: UInt64
    private(set) var provenTag: [UInt8]
    /// Pages that opened since the chain last was at a place proven, in order, waiting for heads to confirm them.
    var held: [PageEntriesV3] = []
    /// Held pages that a later loss cut off from the chain's end: no heads can confirm them any more (heads agree
    /// with the chain's end, which a second lost page may put back on the real chain), so they wait to be named.
    var abandoned: [PageEntriesV3] = []

    /// What a commit's heads did to the chain (``synchronize(to:)``).
    enum HeadsOutcome {
        /// The heads agree with the chain: its held pages, to apply in order, are confirmed.
        case confirmed([PageEntriesV3])
        /// The heads put the chain elsewhere, as its writer left it after the damage reported since the last heads:
        /// its held pages, dropped.
        case moved(dropped: [PageEntriesV3])
        /// The heads would put the chain behind a page that opened at a proven place, or in another start epoch, or
        /// (`ahead`) ahead of a chain that lost nothing since the last heads: no writer makes them, and they are not
        /// followed.
        case refused(ahead: Bool)
    }

    /// The most group sequences one page is tried at: a region of 16 MiB holds at most 57,000 pages of 293 bytes.
    static let maximumUncertainty: UInt64 = 1 << 16
    /// The fewest bytes a segment holding a page takes: its header, the box's nonce and tag, and a page padded to 256 bytes.
    static let minimumPageSegmentSize = RecordV3.segmentHeaderSize + RecordV3.boxOverhead + 256

    init(_ chain: GroupChainV3) {
        keys = chain.keys
        startEpoch = chain.startEpoch
        sequence = chain.sequence
        lastTag = chain.lastTag
        provenSequence = chain.sequence
        provenTag = chain.lastTag
    }

    /// The chain as a replay that verifies follows it, from the last page passed.
    var chain: GroupChainV3 {
        GroupChainV3(keys: keys, at: GroupHeadV3(keyID: keys.keyID, startEpoch: startEpoch, groupSequence: sequence, lastTag: lastTag))
    }

    /// Opens `segment` (ranges in `bytes`) as the chain's next page, at each group sequence it may have, and moves
    /// the chain past it: its entries, or `nil` when it does not open (it is then stepped over, its tag as read).
    ///
    /// - Parameter damagedSecrets: the puts of a page that opened whose secret boxes do not authenticate are
    ///   appended here, and left out of the entries.
    mutating func open(_ segment: SegmentV3, in bytes: [UInt8], place: String, damagedSecrets: inout [DamagedSecretV3]) -> [DecodedEntryV2]? {
        let tag = Array(bytes[segment.pageTag])
        for extra in 0...uncertainty {
            let (candidate, overflow) = sequence.addingReportingOverflow(1 + extra)
            if overflow { break }
            var damaged: [DamagedSecretV3]? = []
            guard let entries = try? GroupPageV3.open(
                bytes, segment: segment, keys: keys, groupSequence: candidate, previousTag: lastTag, base: 0, place: place,
                damagedSecrets: &damaged)
            else { continue }
            sequence = candidate
            lastTag = tag
            if isProven {
                provenSequence = candidate
                provenTag = tag
            }
            uncertainty = 0
            pendingUncertainty = 0
            damagedSecrets += damaged ?? []
            if !(damaged ?? []).isEmpty { lostSinceHeads = true }
            return entries
        }
        sequence = sequence &+ 1
        lastTag = tag
        // A search is made once for each region lost: a page that fails it ends it, so that hostile pages cannot each
        // cost the whole search.
        uncertainty = uncertainty > 0 ? 0 : min(Self.maximumUncertainty, pendingUncertainty)
        pendingUncertainty = 0
        lostSinceHeads = true
        isProven = false
        abandoned += held
        held = []
        return nil
    }

    /// Notes a region of `byteCount` bytes whose records cannot be read: it may have held pages of the group.
    mutating func regionLost(byteCount: Int) {
        let pages = UInt64(max(0, byteCount) / Self.minimumPageSegmentSize) + 1
        pendingUncertainty = min(Self.maximumUncertainty, pendingUncertainty + pages)
        lostSinceHeads = true
        isProven = false
        abandoned += held
        held = []
    }

    /// Puts the chain at `head`, a commit's authenticated head for the group, unless that is behind a place proven.
    mutating func synchronize(to head: GroupHeadV3) -> HeadsOutcome {
        let outcome: HeadsOutcome
        if head.startEpoch == startEpoch, head.groupSequence == sequence, ChainTagV3.matches(head.lastTag, lastTag) {
            outcome = .confirmed(held)
        } else if head.startEpoch != startEpoch || head.groupSequence < provenSequence
            || (head.groupSequence == provenSequence && !ChainTagV3.matches(head.lastTag, provenTag)) {
            return .refused(ahead: false)
        } else if !lostSinceHeads {
            return .refused(ahead: true)
        } else {
            outcome = .moved(dropped: held)
        }
        sequence = head.groupSequence
        lastTag = head.lastTag
        provenSequence = head.groupSequence
        provenTag = head.lastTag
        uncertainty = 0
        pendingUncertainty = 0
        lostSinceHeads = false
        isProven = true
        held = []
        return outcome
    }
}
