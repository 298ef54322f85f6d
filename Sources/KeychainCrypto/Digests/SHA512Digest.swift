/// The 64-byte output of ``SHA512``.
///
/// Compare digests with `==`, which takes the same time wherever they differ; read the bytes with
/// ``withUnsafeBytes(_:)``, `Array(digest)` or ``hexString``.
public struct SHA512Digest: Digest {
    /// A SHA-512 digest is 64 bytes long.
    public static var byteCount: Int { 64 }

    var bytes: [UInt8]

    init(state: SHA512.State) {
        bytes = []
        bytes.reserveCapacity(64)
        for word in state.words {
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
    }

    /// Calls `body` with the digest's 64 bytes.
    ///
    /// - Parameter body: A closure that reads the bytes; the pointer must not escape it.
    /// - Returns: Whatever `body` returns.
    /// - Throws: Whatever `body` throws.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let result: Swift.Result<Result, Failure> = bytes.withUnsafeBytes { buffer in
            do throws(Failure) { return .success(try body(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
