import KeychainCrypto

/// When a commit compacts the keychain file on its own: once dead bytes pass a share of the file and the file
/// is at least a minimum size.
///
/// For example:
/// ```swift
/// var options = Keychain.OpenOptions()
/// options.autoCompaction = AutoCompaction(deadShare: 0.3, minimumFileSize: 4 << 20)
/// ```
public struct AutoCompaction: Sendable, Equatable {
    /// The dead share of the file (0 … 1) past which a commit compacts.
    public var deadShare: Double
    /// Files smaller than this are never compacted automatically.
    public var minimumFileSize: Int

    /// - Parameters:
    ///   - deadShare: The dead share past which a commit compacts (0 … 1).
    ///   - minimumFileSize: The smallest file compacted automatically, in bytes.
    public init(deadShare: Double, minimumFileSize: Int) {
        self.deadShare = deadShare
        self.minimumFileSize = minimumFileSize
    }

    /// Compact when more than half of a file of at least 1 MiB is dead.
    public static let standard = AutoCompaction(deadShare: 0.5, minimumFileSize: 1 << 20)
    /// Never compact automatically; ``Keychain/compact()`` still does on request.
    public static let disabled = AutoCompaction(deadShare: .infinity, minimumFileSize: .max)

    func isDue(_ statistics: KeychainStatistics) -> Bool {
        statistics.fileSize >= minimumFileSize && statistics.deadShare > deadShare
    }
}
