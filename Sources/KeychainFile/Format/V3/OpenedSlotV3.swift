@_spi(KeychainFileInternals) import KeychainCrypto

/// What opening a version 3 key slot with its credential yields: the newest keys (the anchor's, or the last
/// grant's), and what its holder needs to write the slot again — the anchor key and the slot's agreement private
/// key — tied to the slot and to the grants it had when it was opened, so that a holder cannot re-anchor a slot
/// from a stale opening and cut a grant it never read.
struct OpenedSlotV3: Sendable {
    let keys: KeySetV3
    let anchorKey: SymmetricKey
    /// The slot's X25519 private key `x` (random, kept in the anchor).
    let agreementKey: SymmetricKey
    let slotID: [UInt8]
    /// How many grants were opened after the anchor (0: the anchor's keys are the newest).
    let grantsOpened: Int
}
