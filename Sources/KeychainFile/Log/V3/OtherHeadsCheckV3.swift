/// How a scoped holder's replay holds each commit's heads of the groups it does not follow against its count of their
/// segments (SPEC.md §37.4, §37.6 rule 1).
enum OtherHeadsCheckV3: Sendable {
    /// A plain open: a head that does not match the count makes the record `corrupted`.
    case refuse
    /// A recovering read whose count is known: a mismatch is returned with the record
    /// (``ReplayedRecordV2/otherHeadsMismatch``), which is applied, and the count is kept as the segments show it.
    case report
    /// A recovering read past damage, whose count was lost with the damaged bytes: a commit's heads set it again, if
    /// they keep what is still known — every group counted or named before has a head, of the start epoch the header
    /// gives it and at least as far as the segments counted; a group with segments in the record has a head naming
    /// the last one's tag. Otherwise the record is `corrupted`.
    case anchor
}
