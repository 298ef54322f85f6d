/// The 32-byte output of ``SHA256``.
///
/// Compare digests with `==`, which takes the same time wherever they differ; read the bytes with
/// ``withUnsafeBytes(_:)``, `Array(digest)` or ``hexString``.
public struct SHA256Digest: Digest {
    /// A SHA-256 digest is 32 bytes long.
    public static var byteCount: Int { 32 }

    var bytes: (UInt64, UInt64, UInt64, UInt64)

    init(state: SHA256.State) {
        bytes = (0, 0, 0, 0)
        Swift.withUnsafeMutableBytes(of: &bytes) { out in
            let base = out.baseAddress!
            base.storeBigEndian(state.h0, at: 0)
            base.storeBigEndian(state.h1, at: 4)
            base.storeBigEndian(state.h2, at: 8)
            base.storeBigEndian(state.h3, at: 12)
            base.storeBigEndian(state.h4, at: 16)
            base.storeBigEndian(state.h5, at: 20)
            base.storeBigEndian(state.h6, at: 24)
            base.storeBigEndian(state.h7, at: 28)
        }
    }

    /// Calls `body` with the digest's 32 bytes.
    ///
    /// - Parameter body: A closure that reads the bytes; the pointer must not escape it.
    /// - Returns: Whatever `body` returns.
    /// - Throws: Whatever `body` throws.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var copy = bytes
        return try Swift.withUnsafeBytes(of: &copy) { (buffer) throws(Failure) -> Result in try body(buffer) }
    }
}
