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

        var state: State
        /// Bytes waiting for a full block: the first `pendingCount` bytes are meaningful. SHA-1 and SHA-256
        /// share the 64-byte block, so SHA-256's inline storage serves both. (`baseAddress!` below is taken on
        /// that fixed-size inline storage, which always has an address; input pointers are checked.)
        var pending: SHA256.Block
        var pendingCount: Int
        /// Bytes hashed so far, including those pending. FIPS 180-4 limits messages to 2^64 − 1 bits.
        var totalByteCount: UInt64

        /// Creates a hasher in the initial state of FIPS 180-4 §5.3.1.
        public init() {
            state = .initial
            pending = SHA256.Block()
            pendingCount = 0
            totalByteCount = 0
        }

        /// Adds the bytes in `bufferPointer` to the data being hashed.
        ///
        /// - Parameter bufferPointer: The bytes to add.
        public mutating func update(bufferPointer: UnsafeRawBufferPointer) {
            guard var input = bufferPointer.baseAddress, bufferPointer.count > 0 else { return }
            var remaining = bufferPointer.count
            totalByteCount &+= UInt64(remaining)

            if pendingCount > 0 {
                let taken = min(64 - pendingCount, remaining)
                pending.withUnsafeMutableBytes { block in
                    (block.baseAddress! + pendingCount).copyMemory(from: input, byteCount: taken)
                }
                pendingCount += taken
                input += taken
                remaining -= taken
                guard pendingCount == 64 else { return }
                pending.withUnsafeMutableBytes { state.compress(blocks: UnsafeRawPointer($0.baseAddress!), count: 1) }
                pendingCount = 0
            }

            let wholeBlocks = remaining / 64
            if wholeBlocks > 0 {
                state.compress(blocks: input, count: wholeBlocks)
                input += wholeBlocks * 64
                remaining -= wholeBlocks * 64
            }

            if remaining > 0 {
                pending.withUnsafeMutableBytes { block in
                    block.baseAddress!.copyMemory(from: input, byteCount: remaining)
                }
                pendingCount = remaining
            }
        }

        /// Returns the digest of the data added so far; the hasher itself is unchanged.
        public func finalize() -> SHA1Digest {
            var copy = self
            return SHA1Digest(state: copy.finalState())
        }

        /// Pads the message (FIPS 180-4 §5.1.1, the same padding as SHA-256) and returns the final
        /// chaining value.
        mutating func finalState() -> State {
            let bitLength = totalByteCount &<< 3
            var block = pending
            var count = pendingCount
            block.withUnsafeMutableBytes { bytes in
                let base = bytes.baseAddress!
                base.storeBytes(of: 0x80, toByteOffset: count, as: UInt8.self)
                count += 1
                if count > 56 {
                    (base + count).initializeMemory(as: UInt8.self, repeating: 0, count: 64 - count)
                    state.compress(blocks: UnsafeRawPointer(base), count: 1)
                    count = 0
                }
                (base + count).initializeMemory(as: UInt8.self, repeating: 0, count: 56 - count)
                base.storeBigEndian(bitLength, at: 56)
                state.compress(blocks: UnsafeRawPointer(base), count: 1)
            }
            return state
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
