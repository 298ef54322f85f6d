/// A put whose page authenticated but whose secret box did not, as a recovering read finds it
/// (``GroupPageV3/open(_:segment:keys:groupSequence:previousTag:base:place:damagedSecrets:)``): the item's latest
/// version is lost, and known by its id — unless a later entry of the same page names the item (``superseded``).
struct DamagedSecretV3: Sendable, Equatable {
    let id: ItemID
    /// The secret box, in the bytes the page was opened from.
    let box: Range<Int>
    /// Why it was refused, in words.
    let reason: String
    /// Whether a later entry of the same page names the item — a put (a batch that adds an item, then updates it),
    /// a deletion or a tombstone: the lost version was not the page's last, and nothing acknowledged is lost with it.
    var superseded = false
}
