/// A put whose page authenticated but whose secret box did not, as a recovering read finds it
/// (``GroupPageV3/open(_:segment:keys:groupSequence:previousTag:base:place:damagedSecrets:)``): the item's latest
/// version is lost, and known by its id.
struct DamagedSecretV3: Sendable, Equatable {
    let id: ItemID
    /// The secret box, in the bytes the page was opened from.
    let box: Range<Int>
    /// Why it was refused, in words.
    let reason: String
}
