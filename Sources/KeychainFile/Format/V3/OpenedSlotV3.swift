@_spi(KeychainFileInternals) import KeychainCrypto

/// What opening a version 3 key slot with its credential yields: the newest keys (the anchor's, or the last
/// grant's), and the anchor key, with which the holder re-anchors the slot (``KeySlotV3/reanchored(_:fileID:using:)``)
/// so that its grants can be cut.
struct OpenedSlotV3: Sendable {
    let keys: KeySetV3
    let anchorKey: SymmetricKey
    /// How many grants were opened after the anchor (0: the anchor's keys are the newest).
    let grantsOpened: Int
}
