/// One group's entry in a commit's heads (Docs/FormatVersion3.md §2.5.1): where its chain began and where it ends
/// after the commit — 33 bytes: u8 key id ‖ u64 start epoch ‖ u64 group sequence ‖ last page tag (16).
struct GroupHeadV3: Sendable, Equatable {
    static let byteCount = 33

    /// 1 … 255.
    let keyID: UInt8
    /// The epoch in which the group's chain began: its page 1 chains to ``GroupKeysV3/startValue(epoch:)`` of it.
    let startEpoch: UInt64
    /// The group sequence of its last page, ≥ 1.
    let groupSequence: UInt64
    /// The tag of its last page (16 bytes), which only a holder of the group key can make.
    let lastTag: [UInt8]
}
