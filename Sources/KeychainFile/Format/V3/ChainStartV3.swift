/// A header's chain start entry (Docs/FormatVersion3.md §2.6, §2.9): a group whose chain in this file began in an
/// earlier epoch than the header's — a group a scoped rewrite copied as it was — and that epoch, which its page 1
/// chains to (``GroupKeysV3/startValue(epoch:)``). 9 bytes: u8 key id ‖ u64 start epoch. A group without an entry
/// starts at the header's epoch.
///
/// ```swift
/// let starts = [ChainStartV3(keyID: 3, startEpoch: 7)]   // group 3's page 1 follows epoch 7's start value
/// ```
struct ChainStartV3: Sendable, Equatable {
    static let byteCount = 9

    /// 1 … 255.
    let keyID: UInt8
    /// Before the header's epoch.
    let startEpoch: UInt64
}
