/// The CTR key stream of one message: E(J0) for the tag, then E(J0 + 1), E(J0 + 2), …, produced eight
/// blocks per run of the batch cipher, or sixteen (``AESPlanesPair``) while more than eight blocks of the message
/// are still to come. The first run yields the tag mask as well, so a message of up to 112 bytes costs one run of
/// eight blocks, and one of up to 240 bytes one run of sixteen.
struct CounterStream {
    static let batchByteCount = 128

    /// A view, not a reference: a stream lives only inside one call of its context's `seal`, `open`,
    /// `decryptVerified` or `verify`, which keeps the schedule alive (see ``AESRoundKeys/Unretained``).
    private let keys: AESRoundKeys.Unretained
    /// The eight-block input batch in the cipher's stored byte order with the nonce bytes in place; only
    /// the four counter bytes change from batch to batch.
    private var template: Batch
    /// Stored positions of natural bytes 12 … 15 (the big-endian 32-bit counter).
    private let counterPositions: (Int, Int, Int, Int)
    /// The counter value of the first block of the next batch.
    private var counter: UInt32
    /// Key stream not used yet: bytes `position ..< limit` of `buffer`.
    private var buffer: KeyStreamBuffer
    private var position: Int
    private var limit: Int
    /// The bytes of key stream the message still needs after the buffer's, as far as the caller said.
    private var needed: Int
    private var tagMask: SIMD16<UInt8>

    /// Starts the GCM stream for a 96-bit nonce: J0 = nonce ‖ 0x00000001 masks the tag, and the key
    /// stream starts at J0 + 1. `byteCount`, the message's length, only decides how many blocks each run of the
    /// cipher makes.
    init(context: AESGCMContext, nonce: UnsafeRawPointer, byteCount: Int) {
        self.init(keys: context.keys.unretained, nonce: nonce, firstCounter: 1, byteCount: 16 + byteCount)
        tagMask = buffer.first.b0
        position = 16
    }

    /// Starts a plain CTR key stream whose counter blocks are the 12 bytes at `nonce` followed by a
    /// big-endian 32-bit counter starting at `firstCounter` (incremented modulo 2³², as GCM's inc32);
    /// `byteCount` bytes of it are expected.
    init(keys: AESRoundKeys.Unretained, nonce: UnsafeRawPointer, firstCounter: UInt32, byteCount: Int) {
        self.keys = keys
        let offset = keys.inputOffset
        counterPositions = (storedPosition(ofNatural: 12, offset: offset), storedPosition(ofNatural: 13, offset: offset),
                            storedPosition(ofNatural: 14, offset: offset), storedPosition(ofNatural: 15, offset: offset))
        var block = SIMD16<UInt8>(repeating: 0)
        for natural in 0..<12 {
            block[storedPosition(ofNatural: natural, offset: offset)] = nonce.load(fromByteOffset: natural, as: UInt8.self)
        }
        template = Batch(repeating: block)
        buffer = KeyStreamBuffer()
        counter = firstCounter
        position = 0
        limit = 0
        needed = byteCount
        tagMask = .zero
        refill()
    }

    /// Writes the counters `start` … `start + 7` into the template.
    private mutating func writeCounters(from start: UInt32) {
        let positions = counterPositions
        withUnsafeMutableBytes(of: &template) { batch in
            let base = batch.baseAddress!
            var first = 0
            for block in 0..<8 as Range<UInt32> {
                let value = start &+ block
                // Positions are below 16 and `first` below 128: the additions cannot overflow.
                base.storeBytes(of: UInt8(truncatingIfNeeded: value >> 24), toByteOffset: first &+ positions.0, as: UInt8.self)
                base.storeBytes(of: UInt8(truncatingIfNeeded: value >> 16), toByteOffset: first &+ positions.1, as: UInt8.self)
                base.storeBytes(of: UInt8(truncatingIfNeeded: value >> 8), toByteOffset: first &+ positions.2, as: UInt8.self)
                base.storeBytes(of: UInt8(truncatingIfNeeded: value), toByteOffset: first &+ positions.3, as: UInt8.self)
                first &+= 16
            }
        }
    }

    /// Replaces the buffer with the next eight blocks of key stream, or sixteen while more than eight are needed.
    private mutating func refill() {
        let start = counter
        writeCounters(from: start)
        let first = withUnsafeBytes(of: &template) { AESPlanes(transposing: $0.baseAddress!) }
        if needed > Self.batchByteCount {
            writeCounters(from: start &+ 8)
            let second = withUnsafeBytes(of: &template) { AESPlanes(transposing: $0.baseAddress!) }
            var pair = AESPlanesPair(first: first, second: second)
            pair.encrypt(with: keys)
            withUnsafeMutableBytes(of: &buffer) { raw in
                pair.first.writeNaturalBlocks(to: raw.baseAddress!)
                pair.second.writeNaturalBlocks(to: raw.baseAddress! + Self.batchByteCount)
            }
            counter = start &+ 16
            limit = 2 * Self.batchByteCount
        } else {
            var state = first
            state.encrypt(with: keys)
            withUnsafeMutableBytes(of: &buffer) { state.writeNaturalBlocks(to: $0.baseAddress!) }
            counter = start &+ 8
            limit = Self.batchByteCount
        }
        needed = max(0, needed - limit)
        position = 0
    }

    /// XORs the next `count` bytes of key stream onto `input`, writing to `output` (which may equal
    /// `input`).
    mutating func apply(to input: UnsafeRawPointer, into output: UnsafeMutableRawPointer, count: Int) {
        var done = 0
        while done < count {
            if position == limit { refill() }
            let take = min(count - done, limit - position)
            let start = position
            withUnsafeBytes(of: &buffer) { keyStream in
                let stream = keyStream.baseAddress! + start
                var index = 0
                while index + 16 <= take {
                    let a = (input + done + index).loadUnaligned(as: SIMD16<UInt8>.self)
                    let b = (stream + index).loadUnaligned(as: SIMD16<UInt8>.self)
                    (output + done + index).storeBytes(of: a ^ b, as: SIMD16<UInt8>.self)
                    index += 16
                }
                while index < take {
                    let byte = input.load(fromByteOffset: done + index, as: UInt8.self)
                        ^ stream.load(fromByteOffset: index, as: UInt8.self)
                    output.storeBytes(of: byte, toByteOffset: done + index, as: UInt8.self)
                    index += 1
                }
            }
            position += take
            done += take
        }
    }

    /// Writes the tag: the final GHASH value XOR E(J0).
    func writeTag(_ hash: GHASH, to tag: UnsafeMutableRawPointer) {
        var mask = tagMask
        withUnsafeBytes(of: &mask) { maskBytes in
            tag.storeBigEndian(hash.high ^ maskBytes.baseAddress!.loadBigEndianUInt64(at: 0), at: 0)
            tag.storeBigEndian(hash.low ^ maskBytes.baseAddress!.loadBigEndianUInt64(at: 8), at: 8)
        }
    }

    /// Overwrites the key stream and tag mask; called when the message is done.
    mutating func wipe() {
        buffer = KeyStreamBuffer()
        tagMask = .zero
        withUnsafeMutableBytes(of: &buffer) { secureZero($0.baseAddress!, count: $0.count) }
    }
}
