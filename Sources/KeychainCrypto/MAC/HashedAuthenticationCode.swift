/// An HMAC authentication code: the bytes of the outer digest, compared in constant time.
public struct HashedAuthenticationCode<H: HashFunction>: Hashable, Sendable, Sequence, CustomStringConvertible {
    let digest: H.Digest

    /// The number of bytes in the code.
    public var byteCount: Int { H.Digest.byteCount }

    /// Calls `body` with the code's bytes.
    ///
    /// - Parameter body: A closure that reads the bytes; the pointer must not escape it.
    /// - Returns: Whatever `body` returns.
    /// - Throws: Whatever `body` throws.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try digest.withUnsafeBytes(body)
    }

    /// Returns whether two codes are equal, in time that does not depend on their contents.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.digest == rhs.digest
    }

    /// Returns whether the code equals the given bytes, in time that depends only on the lengths.
    public static func == <Bytes: Sequence>(lhs: Self, rhs: Bytes) -> Bool where Bytes.Element == UInt8 {
        lhs.digest == rhs
    }

    public func hash(into hasher: inout Hasher) {
        digest.hash(into: &hasher)
    }

    /// An iterator over the bytes, in order.
    public func makeIterator() -> Array<UInt8>.Iterator {
        digest.makeIterator()
    }

    /// The code in lowercase hexadecimal, prefixed with the type's name.
    public var description: String {
        "HMAC<\(H.self)>: \(digest.hexString)"
    }
}
