/// A chaining value that absorbs 64-byte message blocks: the compression functions of SHA-1 and SHA-256.
protocol BlockCompressor: Sendable {
    /// Compresses `count` consecutive 64-byte blocks starting at `blocks`.
    ///
    /// - Precondition: `blocks` points at `64 * count` readable bytes.
    mutating func compress(blocks: UnsafeRawPointer, count: Int)
}
