/// The contributions of the public bytes of associated data of one length to the GHASH state after it, under one
/// context's hash key: for each varying byte position, 16 values for its high nibble and 16 for its low one.
///
/// `@unchecked Sendable`: every stored property is written in `init` and only read afterwards.
final class AESGCMPublicFieldTables: @unchecked Sendable {
    let context: AESGCMContext
    /// The length of the associated data the tables are for.
    let byteCount: Int
    /// The varying byte positions, in increasing order.
    let positions: [Int]
    /// Where the 8-byte words that cover the associated data start: every multiple of 8 that leaves room for a
    /// word, and, when the length is not a multiple of 8, a last word ending with the data (overlapping the one
    /// before it).
    let wordOffsets: [Int]
    /// For each word of ``wordOffsets``, 0xFF at its fixed (not varying) bytes and 0 at the varying ones:
    /// associated data matches a template when (data word ⊕ template word) & mask is zero for every word.
    let fixedMask: [UInt64]
    /// The varying positions as runs of consecutive bytes, in increasing order.
    private let runs: [(start: Int, count: Int)]
    /// For position number i: its high nibble's 16 values at `32·i`, its low nibble's at `32·i + 16`, each as
    /// (high word, low word) in the lanes of one vector.
    private let values: UnsafeMutablePointer<GHASHLanes>
    private var valueCount: Int { 32 * positions.count }

    /// Prepares the tables for associated data of `byteCount` bytes whose bytes in `varying` change from message to
    /// message. The ranges lie within the data and do not overlap.
    init(context: AESGCMContext, byteCount: Int, varying: [Range<Int>]) {
        self.context = context
        self.byteCount = byteCount
        positions = varying.flatMap { Array($0) }.sorted()
        precondition(
            Set(positions).count == positions.count && positions.allSatisfy { (0..<byteCount).contains($0) },
            "varying bytes within the associated data, each once")
        precondition(byteCount >= 8, "associated data of at least one word")
        let varyingPositions = Set(positions)
        var offsets = Array(stride(from: 0, through: byteCount - 8, by: 8))
        if byteCount % 8 != 0 { offsets.append(byteCount - 8) }
        wordOffsets = offsets
        // Byte k of a word loaded from memory is its bits 8k … 8k + 7: the host is little-endian (AESPlanes.swift).
        fixedMask = offsets.map { offset in
            (0..<8).reduce(UInt64(0)) { mask, k in varyingPositions.contains(offset + k) ? mask : mask | (0xFF << UInt64(8 * k)) }
        }
        var runs: [(start: Int, count: Int)] = []
        for position in positions {
            if let last = runs.last, last.start + last.count == position {
                runs[runs.count - 1].count += 1
            } else {
                runs.append((position, 1))
            }
        }
        self.runs = runs
        values = .allocate(capacity: 32 * positions.count)
        values.initialize(repeating: GHASHLanes(), count: 32 * positions.count)
        let blockCount = (byteCount + 15) / 16
        let key = context.ghashKey
        // The multiplier of the block the last position was in (positions increase: each block's power is made once).
        var multiplier: (block: Int, value: GHASHMultiplier)? = nil
        for (number, position) in positions.enumerated() {
            // Byte `position` sits in block position / 16, which the state multiplies by H^(blockCount − block).
            let block = position / 16, inBlock = position % 16
            if multiplier?.block != block {
                let power = key.power(blockCount - block)
                multiplier = (block, GHASHMultiplier(high: power.high, low: power.low))
            }
            let multiplier = multiplier!.value
            // What each of the byte's eight bits contributes alone (bit 7 is the byte's most significant), in scratch
            // memory that is zeroed after: multiples of a power of H are key material.
            withUnsafeTemporaryAllocation(of: GHASH.self, capacity: 8) { bits in
                for bit in 0..<8 {
                    let word = UInt64(1) << (UInt64(bit) + 8 * UInt64(7 - inBlock % 8))
                    let product = GHASHKey.multiply(inBlock < 8 ? word : 0, inBlock < 8 ? 0 : word, multiplier)
                    bits.initializeElement(at: bit, to: GHASH(high: product.high, low: product.low))
                }
                for nibble in 0..<16 {
                    var high = GHASH(), low = GHASH()
                    for bit in 0..<4 where nibble & (1 << bit) != 0 {
                        high.high ^= bits[bit + 4].high
                        high.low ^= bits[bit + 4].low
                        low.high ^= bits[bit].high
                        low.low ^= bits[bit].low
                    }
                    values[32 * number + nibble] = GHASHLanes(high.high, high.low)
                    values[32 * number + 16 + nibble] = GHASHLanes(low.high, low.low)
                }
                secureZero(UnsafeMutableRawPointer(bits.baseAddress!), count: 8 * MemoryLayout<GHASH>.stride)
            }
        }
    }

    /// Whether byte `index` of the associated data varies.
    func isVarying(_ index: Int) -> Bool { positions.contains(index) }

    deinit {
        secureZero(UnsafeMutableRawPointer(values), count: valueCount * MemoryLayout<GHASHLanes>.stride)
        values.deallocate()
    }

    /// What the varying bytes of `aad` (``byteCount`` bytes) contribute to the GHASH state after it.
    @inline(__always)
    func contribution(of aad: UnsafeRawPointer) -> GHASH {
        var sum = GHASHLanes()
        var table = UnsafePointer(values)
        runs.withUnsafeBufferPointer { runs in
            for run in runs {
                for byte in UnsafeRawBufferPointer(start: aad + run.start, count: run.count) {
                    // `^` is the whole-register one of AESPlanes.swift.
                    sum = sum ^ table[Int(byte >> 4)] ^ table[16 + Int(byte & 15)]
                    table += 32
                }
            }
        }
        return GHASH(high: sum[0], low: sum[1])
    }
}
