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

    var state: State
    /// Bytes waiting for a full block: the first `pendingCount` bytes are meaningful.
    var pending: Block
    var pendingCount: Int
    /// Bytes hashed so far, including those pending. FIPS 180-4 limits messages to 2^64 − 1 bits.
    var totalByteCount: UInt64

    /// Creates a hasher in the initial state of FIPS 180-4 §5.3.3.
    public init() {
        state = .initial
        pending = Block()
        pendingCount = 0
        totalByteCount = 0
    }

    /// Creates a hasher that continues from `state` after `byteCount` bytes (whole blocks) were hashed.
    init(state: State, byteCount: UInt64) {
        self.state = state
        pending = Block()
        pendingCount = 0
        totalByteCount = byteCount
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
    public func finalize() -> SHA256Digest {
        var copy = self
        return SHA256Digest(state: copy.finalState())
    }

    /// Pads the message (FIPS 180-4 §5.1.1) and returns the final chaining value.
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

extension SHA256 {
    /// 64 bytes of inline storage for a partial block.
    struct Block: Sendable {
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

        mutating func withUnsafeMutableBytes<Result>(_ body: (UnsafeMutableRawBufferPointer) -> Result) -> Result {
            Swift.withUnsafeMutableBytes(of: &words, body)
        }
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
