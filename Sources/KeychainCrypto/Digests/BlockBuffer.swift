extension SHA256.State: BlockCompressor {}

extension Insecure.SHA1.State: BlockCompressor {}

/// The framing SHA-1 and SHA-256 share (FIPS 180-4 §5.1.1, §6): input buffered into 64-byte blocks for the
/// compression function, and the final padding — a 1 bit, zeros, and the message length in bits as a
/// big-endian u64.
///
/// Unsafe pointer use is confined here: `baseAddress!` is taken only on `pending`, fixed-size inline storage
/// that always has an address; input pointers are checked before use.
struct BlockBuffer<State: BlockCompressor>: Sendable {
    var state: State
    /// Bytes waiting for a full block: the first `pendingCount` bytes are meaningful.
    private var pending = Block()
    private var pendingCount = 0
    /// Bytes hashed so far, including those pending. FIPS 180-4 limits messages to 2^64 − 1 bits.
    private var totalByteCount: UInt64

    /// A buffer that continues from `state` after `byteCount` bytes (whole blocks) were hashed.
    init(state: State, byteCount: UInt64 = 0) {
        self.state = state
        totalByteCount = byteCount
    }

    /// Adds bytes: whole blocks go straight to the compression function, the rest waits in `pending`.
    mutating func update(_ bufferPointer: UnsafeRawBufferPointer) {
        guard var input = bufferPointer.baseAddress, bufferPointer.count > 0 else { return }
        var remaining = bufferPointer.count
        totalByteCount &+= UInt64(remaining)

        if pendingCount > 0 {
            let taken = min(64 - pendingCount, remaining)
            let offset = pendingCount
            pending.withUnsafeMutableBytes { block in
                (block.baseAddress! + offset).copyMemory(from: input, byteCount: taken)
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
            let tail = input
            pending.withUnsafeMutableBytes { block in
                block.baseAddress!.copyMemory(from: tail, byteCount: remaining)
            }
            pendingCount = remaining
        }
    }

    /// Pads the message (FIPS 180-4 §5.1.1) and returns the final chaining value; the buffer is unchanged.
    func finalState() -> State {
        var state = self.state
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

    /// 64 bytes of inline storage for a partial block.
    struct Block: Sendable {
        var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

        mutating func withUnsafeMutableBytes<Result>(_ body: (UnsafeMutableRawBufferPointer) -> Result) -> Result {
            Swift.withUnsafeMutableBytes(of: &words, body)
        }
    }
}
