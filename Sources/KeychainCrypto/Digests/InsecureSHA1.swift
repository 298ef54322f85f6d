/// Algorithms that are broken or too weak for security, kept only because other formats name them.
///
/// The namespace follows CryptoKit's `Insecure`: its very name tells a reader that nothing here protects
/// anything.
public enum Insecure {}

extension Insecure {
    /// SHA-1 (FIPS 180-4): a 20-byte digest, **for identifiers required by other formats only**.
    ///
    /// SHA-1 is not collision resistant (SHAttered, 2017) and must never be used for signatures, integrity,
    /// key derivation or anything else that has to resist an attacker. KeychainFile uses it for one thing:
    /// the `publicKeyHash` attribute of a certificate, which Apple's keychain defines as the SHA-1 of the
    /// subject public key, so that identities (a certificate and its private key) pair up as they do there.
    ///
    /// The interface is the one of ``SHA256``: hash in one call with ``hash(data:)``, or incrementally with
    /// ``update(data:)`` and ``finalize()``; both give the same digest however the bytes are split.
    ///
    /// For example:
    /// ```swift
    /// let digest = Insecure.SHA1.hash(data: Array("abc".utf8))
    /// print(digest.hexString)  // a9993e364706816aba3e25717850c26c9cd0d89d
    ///
    /// var hasher = Insecure.SHA1()
    /// hasher.update(data: Array("a".utf8))
    /// hasher.update(data: Array("bc".utf8))
    /// assert(hasher.finalize() == digest)
    /// ```
    public struct SHA1: HashFunction {
        /// SHA-1 consumes 64-byte blocks.
        public static let blockByteCount = 64
        /// A SHA-1 digest is 20 bytes long.
        public static let byteCount = 20

        /// The chaining value and the bytes waiting for a whole block (the framing SHA-256 uses too).
        var buffer: BlockBuffer<State>

        /// Creates a hasher in the initial state of FIPS 180-4 §5.3.1.
        public init() {
            buffer = BlockBuffer(state: .initial)
        }

        /// Adds the bytes in `bufferPointer` to the data being hashed.
        ///
        /// - Parameter bufferPointer: The bytes to add.
        public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
            buffer.update(bufferPointer)
        }

        /// Returns the digest of the data added so far; the hasher itself is unchanged.
        public func finalize() -> SHA1Digest {
            SHA1Digest(state: buffer.finalState())
        }
    }

    /// The 20-byte output of ``Insecure/SHA1``.
    ///
    /// Compare digests with `==`, which takes the same time wherever they differ; read the bytes with
    /// ``withUnsafeBytes(_:)``, `Array(digest)` or ``hexString``.
    public struct SHA1Digest: Digest {
        /// A SHA-1 digest is 20 bytes long.
        public static var byteCount: Int { 20 }

        var bytes: (UInt32, UInt32, UInt32, UInt32, UInt32)

        init(state: SHA1.State) {
            bytes = (0, 0, 0, 0, 0)
            Swift.withUnsafeMutableBytes(of: &bytes) { out in
                let base = out.baseAddress!
                base.storeBigEndian(state.h0, at: 0)
                base.storeBigEndian(state.h1, at: 4)
                base.storeBigEndian(state.h2, at: 8)
                base.storeBigEndian(state.h3, at: 12)
                base.storeBigEndian(state.h4, at: 16)
            }
        }

        /// Calls `body` with the digest's 20 bytes.
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
}
