/// The output of ``BLAKE2b``: 1 to 64 bytes, compared in constant time.
///
/// It is not a ``Digest``, whose length is fixed per type; ``BLAKE2b512Digest`` is. Compare digests with
/// `==`, which takes the same time wherever they differ (a keyed BLAKE2b digest is a MAC tag); read the
/// bytes with ``withUnsafeBytes(_:)``, `Array(digest)` or ``hexString``.
///
/// For example:
/// ```swift
/// let digest = try BLAKE2b.hash(data: Array("abc".utf8), outputByteCount: 32)
/// print(digest.byteCount)   // 32
/// ```
public struct BLAKE2bDigest: Hashable, Sendable, Sequence, CustomStringConvertible {
    /// Up to 64 bytes; the first `byteCount` are the digest and the rest are zero.
    private var bytes: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

    /// The number of bytes in the digest, 1 to 64.
    public let byteCount: Int

    /// A digest of `byteCount` bytes written by `body`.
    ///
    /// - Precondition: `1 ≤ byteCount ≤ 64`; `body` writes `byteCount` bytes.
    init(byteCount: Int, initializingWith body: (UnsafeMutableRawPointer) -> Void) {
        self.byteCount = byteCount
        Swift.withUnsafeMutableBytes(of: &bytes) { body($0.baseAddress!) }
    }

    /// Calls `body` with the digest's bytes.
    ///
    /// - Parameter body: A closure that reads the bytes; the pointer must not escape it.
    /// - Returns: Whatever `body` returns.
    /// - Throws: Whatever `body` throws.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var copy = bytes
        let count = byteCount
        return try Swift.withUnsafeBytes(of: &copy) { (buffer) throws(Failure) -> Result in
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    /// Returns whether two digests are equal, in time that depends only on their lengths.
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

    /// The digest's bytes in lowercase hexadecimal.
    public var hexString: String {
        withUnsafeBytes { hexEncoded($0) }
    }

    /// The digest in lowercase hexadecimal, prefixed with its length.
    public var description: String {
        "BLAKE2b-\(byteCount * 8): \(hexString)"
    }
}
