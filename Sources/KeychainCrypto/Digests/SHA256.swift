/// SHA-256 (FIPS 180-4): a 32-byte digest of any amount of data.
///
/// Hash in one call with ``hash(data:)``, or incrementally with ``update(data:)`` and ``finalize()``;
/// both give the same digest for the same bytes however they are split. The value is a plain struct, so a
/// partly fed hasher can be copied and each copy continued separately.
///
/// For example:
/// ```swift
/// let digest = SHA256.hash(data: Array("abc".utf8))
/// print(digest.hexString)  // ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
///
/// var hasher = SHA256()
/// hasher.update(data: Array("a".utf8))
/// hasher.update(data: Array("bc".utf8))
/// assert(hasher.finalize() == digest)
/// ```
public struct SHA256: HashFunction {
    /// SHA-256 consumes 64-byte blocks.
    public static let blockByteCount = 64
    /// A SHA-256 digest is 32 bytes long.
    public static let byteCount = 32

    /// The chaining value and the bytes waiting for a whole block.
    var buffer: BlockBuffer<State>

    /// The chaining value after the whole blocks hashed so far.
    var state: State { buffer.state }

    /// Creates a hasher in the initial state of FIPS 180-4 §5.3.3.
    public init() {
        buffer = BlockBuffer(state: .initial)
    }

    /// Creates a hasher that continues from `state` after `byteCount` bytes (whole blocks) were hashed.
    init(state: State, byteCount: UInt64) {
        buffer = BlockBuffer(state: state, byteCount: byteCount)
    }

    /// Adds the bytes in `bufferPointer` to the data being hashed.
    ///
    /// - Parameter bufferPointer: The bytes to add.
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        buffer.update(bufferPointer)
    }

    /// Returns the digest of the data added so far; the hasher itself is unchanged.
    public func finalize() -> SHA256Digest {
        SHA256Digest(state: buffer.finalState())
    }
}

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
