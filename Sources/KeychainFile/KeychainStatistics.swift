import KeychainCrypto

/// How much of a keychain file is live, and how much compaction would reclaim.
public struct KeychainStatistics: Sendable, Equatable, CustomStringConvertible {
    /// The number of live items.
    public let itemCount: Int
    /// The header plus the put entries that wrote the live items (their boxes and framing) — in a file of format
    /// version 2 also the commit slots and the parity over those entries: about what a compacted file holds.
    public let liveBytes: Int
    /// Everything else up to the end of the last record: overwritten and deleted items, deletion entries,
    /// transaction framing.
    public let deadBytes: Int
    /// The file's size, a torn tail included.
    public let fileSize: Int
    /// The file's epoch (1, plus one for each compaction or credential change).
    public let epoch: UInt64

    /// `deadBytes` as a share of the file, 0 … 1.
    public var deadShare: Double { fileSize == 0 ? 0 : Double(deadBytes) / Double(fileSize) }

    public var description: String {
        "\(itemCount) items, \(liveBytes) live bytes, \(deadBytes) dead bytes, \(fileSize) bytes in the file, epoch \(epoch)"
    }
}
