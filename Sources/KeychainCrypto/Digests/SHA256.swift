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
