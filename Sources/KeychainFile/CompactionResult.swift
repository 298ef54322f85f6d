import KeychainCrypto

/// What a compaction did.
public struct CompactionResult: Sendable, Equatable {
    /// The file before.
    public let before: KeychainStatistics
    /// The file after.
    public let after: KeychainStatistics
}
