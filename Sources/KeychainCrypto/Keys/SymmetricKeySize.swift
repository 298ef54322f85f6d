/// The size of a symmetric key, in bits.
///
/// For example:
/// ```swift
/// let key = SymmetricKey(size: .bits256)
/// ```
public struct SymmetricKeySize: Sendable, Hashable {
    /// The number of bits in the key.
    public let bitCount: Int

    /// A size of 128 bits.
    public static var bits128: SymmetricKeySize { SymmetricKeySize(bitCount: 128) }
    /// A size of 192 bits.
    public static var bits192: SymmetricKeySize { SymmetricKeySize(bitCount: 192) }
    /// A size of 256 bits.
    public static var bits256: SymmetricKeySize { SymmetricKeySize(bitCount: 256) }

    /// Creates a size of `bitCount` bits.
    ///
    /// As in CryptoKit, a key of this size has `bitCount / 8` bytes (rounded down); a negative count
    /// gives an empty key. Algorithms refuse keys of sizes they do not support with a typed error.
    ///
    /// - Parameter bitCount: The number of bits, normally a multiple of 8.
    public init(bitCount: Int) {
        self.bitCount = bitCount
    }
}
