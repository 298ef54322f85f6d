@_spi(KeychainFileInternals) import KeychainCrypto

/// The key slot a log's credential opened, as the header held it then, with what opening it gave: enough for that
/// log to write the slot again — its anchor sealed over the newest keys, its grants cut (Docs/FormatVersion3.md
/// §2.2) — without deriving its credential's key again, so that the grants other holders' rotations and added
/// groups leave in it do not pile up to the 32 a slot holds.
///
/// The opening counts only while the header holds these very bytes: a slot granted to (or re-anchored) since was
/// not read whole by it, and re-anchoring from it would seal stale keys, or cut a grant never read.
///
/// ```swift
/// let own = OwnSlotV3(slot: opened.header.slots[opened.slotIndex], opened: opened.slot)
/// if let again = try own.reanchoring(header.slots[i], logKey: logKey, root: root, fileID: fileID, using: &generator) {
///     slots[i] = again.slot      // no grants; the log keeps `again` for its next rewrite
/// }
/// ```
struct OwnSlotV3: Sendable {
    let slot: KeySlotV3
    let opened: OpenedSlotV3

    /// This slot with its anchor sealed over `keys` and its grants cut, and its opening as written: what a holder
    /// writes when it gives its own slot new keys (adding a group) rather than a grant.
    ///
    /// - Throws: what ``KeySlotV3/reanchored(_:fileID:using:)`` throws.
    func reanchored<Generator: RandomNumberGenerator>(
        on keys: KeySetV3, fileID: [UInt8], using generator: inout Generator
    ) throws(KeychainError) -> OwnSlotV3 {
        func opening(grantsOpened: Int) -> OpenedSlotV3 {
            OpenedSlotV3(
                keys: keys, anchorKey: opened.anchorKey, agreementKey: opened.agreementKey, slotID: slot.slotID, grantsOpened: grantsOpened)
        }
        let written = try slot.reanchored(opening(grantsOpened: opened.grantsOpened), fileID: fileID, using: &generator)
        return OwnSlotV3(slot: written, opened: opening(grantsOpened: 0))
    }

    /// `candidate` re-anchored on the keys this opening gave, when it is the very slot this opening read, it holds
    /// grants, and those keys are the ones the header being written is under (`logKey`, and `root` for a full slot);
    /// `nil` otherwise, when it is written as it is.
    ///
    /// - Throws: what ``KeySlotV3/reanchored(_:fileID:using:)`` throws.
    func reanchoring<Generator: RandomNumberGenerator>(
        _ candidate: KeySlotV3, logKey: SymmetricKey, root: SymmetricKey?, fileID: [UInt8], using generator: inout Generator
    ) throws(KeychainError) -> OwnSlotV3? {
        guard candidate == slot, !slot.grants.isEmpty, opened.keys.logKey == logKey, opened.keys.root == root else { return nil }
        return try reanchored(on: opened.keys, fileID: fileID, using: &generator)
    }
}
