/// A box's tag as the chain value the next box's associated data names (SPEC.md §7.2), held inline: the 16
/// bytes without an allocation of their own, which opening a large file would otherwise make for every box.
struct ChainValue: Sendable, Equatable {
    /// The bytes in order. Opaque bytes, not an integer: no byte order applies.
    private var storage: (UInt64, UInt64) = (0, 0)

    /// The number of bytes in a chain value: a GCM tag's.
    static let byteCount = 16

    /// The 16 bytes at `bytes`.
    init(_ bytes: UnsafeRawPointer) {
        withUnsafeMutableBytes(of: &storage) { $0.baseAddress!.copyMemory(from: bytes, byteCount: Self.byteCount) }
    }

    /// The 16 bytes of `bytes` that end at `end`.
    ///
    /// - Precondition: `16 ≤ end ≤ bytes.count`.
    init(_ bytes: [UInt8], endingAt end: Int) {
        precondition(end >= Self.byteCount && end <= bytes.count, "a chain value is the 16 bytes of a tag")
        self = bytes.withUnsafeBytes { ChainValue($0.baseAddress! + (end - Self.byteCount)) }
    }

    /// The chain value `bytes` holds.
    ///
    /// - Precondition: `bytes` is 16 bytes long (every chain value the format makes is a tag).
    init(_ bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount, "a chain value is the 16 bytes of a tag")
        self.init(bytes, endingAt: bytes.count)
    }

    /// The 16 bytes, in an array.
    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Calls `body` with the 16 bytes.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        var copy = storage
        return Swift.withUnsafeBytes(of: &copy) { body($0) }
    }

    static func == (lhs: ChainValue, rhs: ChainValue) -> Bool { lhs.storage == rhs.storage }
}
