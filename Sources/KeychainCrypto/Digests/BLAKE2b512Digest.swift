/// The 64-byte output of ``BLAKE2b512``.
///
/// Compare digests with `==`, which takes the same time wherever they differ; read the bytes with
/// ``withUnsafeBytes(_:)``, `Array(digest)` or ``hexString``.
public struct BLAKE2b512Digest: Digest {
    /// A BLAKE2b-512 digest is 64 bytes long.
    public static var byteCount: Int { 64 }

    private var bytes: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

    /// A digest whose 64 bytes `body` writes.
    init(initializingWith body: (UnsafeMutableRawPointer) -> Void) {
        Swift.withUnsafeMutableBytes(of: &bytes) { body($0.baseAddress!) }
    }

    /// Calls `body` with the digest's 64 bytes.
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
