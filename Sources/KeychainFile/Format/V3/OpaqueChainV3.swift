/// How far a scoped reader has seen the chain of a group it does not follow (Docs/FormatVersion3.md §2.6): how many
/// segments of that key id the file holds so far, and the page tag of the last — what a head names, readable without
/// the group's key — with the epoch the header says its chain began in. Within one file a group's chain is whole (§2.5), so a head naming another count or tag means pages
/// of the group were dropped, added or replaced: its holders would refuse the file, and a scoped holder must not
/// write on top of it.
///
/// ```swift
/// var chain = OpaqueChainV3(keyID: 3, startEpoch: header.startEpoch(of: 3))
/// chain.advance(pageTag: segmentBytes[segment.pageTag], byteCount: segmentBytes.count)
/// try chain.check(against: heads, at: offset)
/// ```
struct OpaqueChainV3: Sendable, Equatable {
    let keyID: UInt8
    /// Where the header says the group's chain in this file began (its chain start entry, else the header's epoch).
    let startEpoch: UInt64
    /// The number of the group's segments seen: its last page's group sequence.
    private(set) var sequence: UInt64 = 0
    private(set) var lastTag: [UInt8] = []
    /// The bytes of those segments, headers included: what a scoped rewrite copies.
    private(set) var byteCount = 0
    /// For an open against a pinned head (SPEC.md §37.5): the group sequence of the pinned page,
    /// and that page's tag once the chain has passed it.
    let watchedSequence: UInt64?
    private(set) var watchedTag: [UInt8]?

    init(keyID: UInt8, startEpoch: UInt64, watching watchedSequence: UInt64? = nil) {
        self.keyID = keyID
        self.startEpoch = startEpoch
        self.watchedSequence = watchedSequence
    }

    /// The chain where a commit's `head` says it is: for a recovering read past damage, whose count of the group's
    /// segments was lost with the damaged bytes (SPEC.md §37.6 rule 1). The bytes of the segments are not known.
    init(anchoredAt head: GroupHeadV3, watching watchedSequence: UInt64? = nil) {
        self.init(keyID: head.keyID, startEpoch: head.startEpoch, watching: watchedSequence)
        sequence = head.groupSequence
        lastTag = head.lastTag
        if sequence == watchedSequence { watchedTag = lastTag }
    }

    /// Counts one more segment of the group, `byteCount` bytes long, whose page box ends with `pageTag`.
    mutating func advance(pageTag: ArraySlice<UInt8>, byteCount: Int) {
        sequence &+= 1
        lastTag = Array(pageTag)
        if sequence == watchedSequence { watchedTag = lastTag }
        self.byteCount += byteCount
    }

    /// Checks what a commit's heads say of the group against the segments seen. The caller asks it of every group
    /// that has segments or that an earlier commit named: every commit names every group, and none is ever removed.
    ///
    /// - Throws: `.corrupted` at `offset` (the heads segment's) when the heads name none for the group, or name
    ///   another count, start epoch or — when the group has segments — last tag. A head of group sequence 0 says the
    ///   group has no page; its tag, the group's start value, only the group's holders can check.
    func check(against heads: HeadsV3, at offset: Int) throws(KeychainError) {
        guard let head = heads[keyID] else {
            throw .corrupted(
                offset: offset,
                reason: sequence > 0
                    ? "record: group \(keyID) has \(sequence) segments but the heads name none"
                    : "record: the heads no longer name group \(keyID), which an earlier commit named: the group's pages and head may have been dropped")
        }
        guard head.startEpoch == startEpoch else {
            throw .corrupted(
                offset: offset, reason: "record: the heads say group \(keyID)'s chain began in epoch \(head.startEpoch), the header says \(startEpoch)")
        }
        guard head.groupSequence == sequence, sequence == 0 || ChainTagV3.matches(head.lastTag, lastTag) else {
            throw .corrupted(
                offset: offset, reason: "record: group \(keyID) has \(sequence) segments in the file, its head names page \(head.groupSequence) with another tag: pages of the group were dropped, added or replaced")
        }
    }
}
