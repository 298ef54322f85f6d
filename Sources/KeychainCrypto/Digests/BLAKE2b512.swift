/// BLAKE2b-512 (RFC 7693): unkeyed BLAKE2b with a 64-byte digest, as a ``HashFunction``.
///
/// It is ``BLAKE2b`` with the output length fixed, so that it works wherever the module takes a hash
/// function type (``HMAC``, ``HKDF``). For other lengths or a key, use ``BLAKE2b`` itself.
///
/// For example:
/// ```swift
/// let digest = BLAKE2b512.hash(data: Array("abc".utf8))
/// print(digest.hexString)  // ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1…
/// ```
public struct BLAKE2b512: HashFunction {
    /// BLAKE2b consumes 128-byte blocks.
    public static let blockByteCount = 128
    /// A BLAKE2b-512 digest is 64 bytes long.
    public static let byteCount = 64

    private var hasher: BLAKE2b

    /// Creates a hasher in the initial state of RFC 7693 §3.3 for a 64-byte digest without a key.
    public init() {
        hasher = BLAKE2b(uncheckedOutputByteCount: 64)
    }

    /// Adds the bytes in `bufferPointer` to the data being hashed.
    ///
    /// - Parameter bufferPointer: The bytes to add.
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: bufferPointer)
    }

    /// Returns the digest of the data added so far; the hasher itself is unchanged.
    public func finalize() -> BLAKE2b512Digest {
        BLAKE2b512Digest { hasher.finalize(into: $0) }
    }
}
