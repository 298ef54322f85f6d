/// The output of a hash function: a fixed number of bytes, compared in constant time.
///
/// Digests are sequences of bytes, so `Array(digest)` gives the bytes and a digest can be passed wherever
/// this module accepts bytes.
public protocol Digest: Hashable, Sendable, Sequence, CustomStringConvertible where Element == UInt8 {
    /// The number of bytes in a digest of this type.
    static var byteCount: Int { get }

    /// Calls `body` with the digest's bytes.
    ///
    /// - Parameter body: A closure that reads the bytes; the pointer must not escape it.
    /// - Returns: Whatever `body` returns.
    /// - Throws: Whatever `body` throws.
    func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result
}

extension Digest {
    /// Returns whether two digests are equal, in time that does not depend on their contents.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.withUnsafeBytes { l in rhs.withUnsafeBytes { r in constantTimeEquals(l, r) } }
    }

    /// Returns whether the digest equals the given bytes, in time that depends only on the lengths.
    public static func == <Bytes: Sequence>(lhs: Self, rhs: Bytes) -> Bool where Bytes.Element == UInt8 {
        lhs.withUnsafeBytes { l in withContiguousBytes(of: rhs) { r in constantTimeEquals(l, r) } }
    }

    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// An iterator over the bytes, in order.
    public func makeIterator() -> Array<UInt8>.Iterator {
        withUnsafeBytes { Array($0) }.makeIterator()
    }

    /// The digest in lowercase hexadecimal, prefixed with the digest type's name.
    public var description: String {
        "\(Self.self): \(hexString)"
    }

    /// The digest's bytes in lowercase hexadecimal.
    public var hexString: String {
        withUnsafeBytes { hexEncoded($0) }
    }
}
