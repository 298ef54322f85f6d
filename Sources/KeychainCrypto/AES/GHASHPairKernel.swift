// One file for the kernel and its private helper types: they are inlined into one another and private to it.
//
// The bulk GHASH kernel: two blocks at a time in the two 64-bit lanes of an SSE2 register, with `pmuludq`.
//
// Arithmetic. `pmuludq` multiplies the low 32 bits of each 64-bit lane into a full 64-bit product. Split a
// 32-bit operand into its four classes of every fourth bit (bit positions ≡ c mod 4, at most 8 bits each).
// The integer product of a class-i piece and a class-j piece has all its partial products at positions
// ≡ i + j (mod 4), at most 8 of them at any one position, fewer than 16: the 4-bit "digit" at a position never
// carries into the next position of its class, so bit q of the integer product is the parity of the partial
// products at q, which is bit q of the carry-less product. For output class k the four products a_i·b_(k−i)
// are XORed and only the class-k bits kept; the four masked classes are ORed. A 32 × 32-bit carry-less
// product is 16 multiplications, and each `pmuludq` does two blocks' worth. Integer multiplication takes the
// same time for every operand on the processors Swift targets; nothing here branches on data or indexes
// memory with it.
//
// Karatsuba. X = X1·2⁶⁴ + X0 (the block's big-endian words), and each 64-bit half V = v1·2³² + v0. The nine
// 32 × 32 products of a 128 × 128 one are numbered p = 3·half + sub, with half 0: X0·H0, 1: X1·H1,
// 2: (X0 ⊕ X1)·(H0 ⊕ H1), and sub 0: v0·w0, 1: v1·w1, 2: (v0 ⊕ v1)·(w0 ⊕ w1).
//
// Layout. Groups of four blocks are hashed as (Y ⊕ X1)·H⁴ ⊕ X2·H³ ⊕ X3·H² ⊕ X4·H with one reduction, as
// the scalar code did. Lane 0 carries one block of a pair and lane 1 the next, each with its own power of H,
// so the lanes never meet until the sums of the group's two pairs are added, masked once (masking and XOR
// commute), recombined, and the two lanes XORed before the reduction. The key side — each power's 36 class
// pieces, paired lane by lane — is laid out once per key (``GHASHPairTable``).
//
// Against the scalar kernel this replaced (64 × 64-bit products with `mul`, 20 a product), it needs about two
// thirds of the instructions a block with baseline x86-64 code: most of the scalar ones were moves around the
// fixed registers of `mul` (figures in Docs/Performance.md).

/// Two 64-bit lanes: one block's pieces (or products) per lane.
typealias GHASHLanes = SIMD2<UInt64>

/// The powers H, H², H³ and H⁴ split for the pair kernel, in memory of its own that ``wipeAndDeallocate()``
/// zeroes (it is key material, like H).
///
/// Four lane pairs of 36 vectors: pair 0 = (H⁴, H³), 1 = (H², H), 2 = (H³, H²), 3 = (H, 0). Each vector holds a
/// class piece of the two powers, in the order ``GHASHPieces`` splits a block.
struct GHASHPairTable {
    /// The class pieces of one field element: 3 halves × 3 subproducts × 4 classes.
    static let piecesPerElement = 36
    /// Pair index of (H⁴, H³), (H², H), (H³, H²) and (H, 0).
    static let fourThree = 0, twoOne = 1, threeTwo = 2, oneZero = 3
    static let vectorCount = 4 * piecesPerElement

    let vectors: UnsafeMutablePointer<GHASHLanes>

    /// Lays out the powers, each given as its big-endian words.
    init(h1: (high: UInt64, low: UInt64), h2: (high: UInt64, low: UInt64), h3: (high: UInt64, low: UInt64),
         h4: (high: UInt64, low: UInt64)) {
        vectors = .allocate(capacity: Self.vectorCount)
        vectors.initialize(repeating: GHASHLanes(), count: Self.vectorCount)
        // Written in place, lane by lane: no copy of the key material is left in memory that is not wiped.
        fill(pair: Self.fourThree, lane: 0, h4); fill(pair: Self.fourThree, lane: 1, h3)
        fill(pair: Self.twoOne, lane: 0, h2); fill(pair: Self.twoOne, lane: 1, h1)
        fill(pair: Self.threeTwo, lane: 0, h3); fill(pair: Self.threeTwo, lane: 1, h2)
        fill(pair: Self.oneZero, lane: 0, h1)
    }

    /// Zeroes the table and frees it. The table must not be used afterwards.
    func wipeAndDeallocate() {
        secureZero(UnsafeMutableRawPointer(vectors), count: Self.vectorCount * MemoryLayout<GHASHLanes>.stride)
        vectors.deallocate()
    }

    /// The pieces of the lane pair `pair`.
    @inline(__always)
    func pair(_ pair: Int) -> UnsafePointer<GHASHLanes> {
        UnsafePointer(vectors + pair * Self.piecesPerElement)
    }

    /// Writes the 36 class pieces of `element` into lane `lane` of pair `pair`, in the order ``GHASHPieces``
    /// splits a block: for each half (low, high, their XOR), for each 32-bit operand of its subproducts (low,
    /// high, their XOR), the four classes. (Lane 0 is the first 8 bytes of a vector: the host is little-endian,
    /// which AESPlanes.swift checks.)
    private func fill(pair: Int, lane: Int, _ element: (high: UInt64, low: UInt64)) {
        let base = UnsafeMutableRawPointer(vectors + pair * Self.piecesPerElement) + 8 * lane
        var index = 0
        func classes(_ operand: UInt64) {
            for mask: UInt64 in [0x1111_1111, 0x2222_2222, 0x4444_4444, 0x8888_8888] {
                base.storeBytes(of: operand & mask, toByteOffset: 16 * index, as: UInt64.self)
                index += 1
            }
        }
        func half(_ value: UInt64) {
            let v0 = value & 0xffff_ffff, v1 = value >> 32
            classes(v0); classes(v1); classes(v0 ^ v1)
        }
        half(element.low); half(element.high); half(element.high ^ element.low)
    }
}

// MARK: - The kernel

/// Every fourth bit, from bit k: the class masks, in both lanes.
@inline(__always) private var class0: GHASHLanes { GHASHLanes(repeating: 0x1111_1111_1111_1111) }
@inline(__always) private var class1: GHASHLanes { GHASHLanes(repeating: 0x2222_2222_2222_2222) }
@inline(__always) private var class2: GHASHLanes { GHASHLanes(repeating: 0x4444_4444_4444_4444) }
@inline(__always) private var class3: GHASHLanes { GHASHLanes(repeating: 0x8888_8888_8888_8888) }

/// Lane by lane, the low 32 bits of `a` times the low 32 bits of `b`, to 64 bits: one `pmuludq` (LLVM drops the
/// masks, which that instruction applies anyway). `&` is the whole-register one of AESPlanes.swift.
@inline(__always)
private func multiplyLow32(_ a: GHASHLanes, _ b: GHASHLanes) -> GHASHLanes {
    let low32 = GHASHLanes(repeating: 0xffff_ffff)
    return (a & low32) &* (b & low32)
}

/// The data side of one pair of blocks, split: for each of the nine Karatsuba products, its 32-bit operand's
/// four classes (in the low 32 bits of each lane; the high 32 bits are ignored by `pmuludq`).
private struct GHASHPieces {
    private var pieces: (
        GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes,
        GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes,
        GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes,
        GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes
    )

    /// Splits two blocks given as their high words and their low words, one block per lane.
    @inline(__always)
    init(high: GHASHLanes, low: GHASHLanes) {
        @inline(__always)
        func half(_ v: GHASHLanes) -> (
            GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes,
            GHASHLanes, GHASHLanes, GHASHLanes
        ) {
            let c0 = v & class0, c1 = v & class1, c2 = v & class2, c3 = v & class3
            let shift = GHASHLanes(repeating: 32)
            let h0 = c0 &>> shift, h1 = c1 &>> shift, h2 = c2 &>> shift, h3 = c3 &>> shift
            return (c0, c1, c2, c3, h0, h1, h2, h3, c0 ^ h0, c1 ^ h1, c2 ^ h2, c3 ^ h3)
        }
        let l = half(low), h = half(high), m = half(high ^ low)
        pieces = (
            l.0, l.1, l.2, l.3, l.4, l.5, l.6, l.7, l.8, l.9, l.10, l.11,
            h.0, h.1, h.2, h.3, h.4, h.5, h.6, h.7, h.8, h.9, h.10, h.11,
            m.0, m.1, m.2, m.3, m.4, m.5, m.6, m.7, m.8, m.9, m.10, m.11
        )
    }

    @inline(__always)
    subscript(_ index: Int) -> GHASHLanes {
        withUnsafeBytes(of: pieces) { $0.load(fromByteOffset: 16 * index, as: GHASHLanes.self) }
    }
}

/// The four class sums of product `p`, not yet masked: s_k = ⊕_i a_i·b_(k−i mod 4).
@inline(__always)
private func classSums(_ x: GHASHPieces, _ p: Int, _ key: UnsafePointer<GHASHLanes>) -> (GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes) {
    let a0 = x[4 * p], a1 = x[4 * p + 1], a2 = x[4 * p + 2], a3 = x[4 * p + 3]
    let b = key + 4 * p
    let b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3]
    return (
        multiplyLow32(a0, b0) ^ multiplyLow32(a1, b3) ^ multiplyLow32(a2, b2) ^ multiplyLow32(a3, b1),
        multiplyLow32(a0, b1) ^ multiplyLow32(a1, b0) ^ multiplyLow32(a2, b3) ^ multiplyLow32(a3, b2),
        multiplyLow32(a0, b2) ^ multiplyLow32(a1, b1) ^ multiplyLow32(a2, b0) ^ multiplyLow32(a3, b3),
        multiplyLow32(a0, b3) ^ multiplyLow32(a1, b2) ^ multiplyLow32(a2, b1) ^ multiplyLow32(a3, b0)
    )
}

/// Keeps each class sum's own bits and joins them: the carry-less product.
@inline(__always)
private func masked(_ s: (GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes)) -> GHASHLanes {
    (s.0 & class0) | (s.1 & class1) | (s.2 & class2) | (s.3 & class3)
}

/// The nine 32 × 32 products of one or two pairs of blocks, summed over the pairs.
private struct GHASHPairProducts {
    private var r: (GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes, GHASHLanes)

    /// The products of the pair `x` with the key pair `key`.
    @inline(__always)
    init(_ x: GHASHPieces, _ key: UnsafePointer<GHASHLanes>) {
        @inline(__always) func one(_ p: Int) -> GHASHLanes { masked(classSums(x, p, key)) }
        r = (one(0), one(1), one(2), one(3), one(4), one(5), one(6), one(7), one(8))
    }

    /// The products of `x` with `key` plus those of `y` with `otherKey`, masked once.
    @inline(__always)
    init(_ x: GHASHPieces, _ key: UnsafePointer<GHASHLanes>, _ y: GHASHPieces, _ otherKey: UnsafePointer<GHASHLanes>) {
        @inline(__always) func one(_ p: Int) -> GHASHLanes {
            // `y` first: in the main loop it is the pair that does not wait for the running state.
            let q = classSums(y, p, otherKey)
            let s = classSums(x, p, key)
            return masked((s.0 ^ q.0, s.1 ^ q.1, s.2 ^ q.2, s.3 ^ q.3))
        }
        r = (one(0), one(1), one(2), one(3), one(4), one(5), one(6), one(7), one(8))
    }

    /// Recombines the Karatsuba products in each lane, adds the lanes and reduces: the new GHASH state.
    @inline(__always)
    func reduced() -> (high: UInt64, low: UInt64) {
        let shift = GHASHLanes(repeating: 32)
        @inline(__always)
        func join(_ low: GHASHLanes, _ high: GHASHLanes, _ middle: GHASHLanes) -> (low: GHASHLanes, high: GHASHLanes) {
            let mid = middle ^ low ^ high
            return (low ^ (mid &<< shift), high ^ (mid &>> shift))
        }
        let l = join(r.0, r.1, r.2), h = join(r.3, r.4, r.5), m = join(r.6, r.7, r.8)
        let w0 = l.low
        let w1 = l.high ^ m.low ^ l.low ^ h.low
        let w2 = h.low ^ m.high ^ l.high ^ h.high
        let w3 = h.high
        let product = GHASHProduct(w3: w3[0] ^ w3[1], w2: w2[0] ^ w2[1], w1: w1[0] ^ w1[1], w0: w0[0] ^ w0[1])
        return product.reduced()
    }
}

extension GHASH {
    /// Loads two blocks as their high words and their low words, one block per lane.
    @inline(__always)
    private static func loadPair(_ first: UnsafeRawPointer, _ second: UnsafeRawPointer) -> (high: GHASHLanes, low: GHASHLanes) {
        (GHASHLanes(first.loadBigEndianUInt64(at: 0), second.loadBigEndianUInt64(at: 0)),
         GHASHLanes(first.loadBigEndianUInt64(at: 8), second.loadBigEndianUInt64(at: 8)))
    }

    /// Absorbs `count` whole blocks with the pair kernel: four at a time, then the last one to three as one group.
    @inline(__always)
    mutating func absorbInPairs(_ blocks: UnsafeRawPointer, count: Int, table: GHASHPairTable) {
        var p = blocks
        var remaining = count
        while remaining >= 4 {
            let a = Self.loadPair(p, p + 16), b = Self.loadPair(p + 32, p + 48)
            let x = GHASHPieces(high: a.high ^ GHASHLanes(high, 0), low: a.low ^ GHASHLanes(low, 0))
            let y = GHASHPieces(high: b.high, low: b.low)
            (high, low) = GHASHPairProducts(x, table.pair(GHASHPairTable.fourThree), y, table.pair(GHASHPairTable.twoOne)).reduced()
            p += 64
            remaining -= 4
        }
        switch remaining {
        case 3:
            let a = Self.loadPair(p, p + 16)
            let x = GHASHPieces(high: a.high ^ GHASHLanes(high, 0), low: a.low ^ GHASHLanes(low, 0))
            let y = GHASHPieces(high: GHASHLanes(p.loadBigEndianUInt64(at: 32), 0), low: GHASHLanes(p.loadBigEndianUInt64(at: 40), 0))
            (high, low) = GHASHPairProducts(x, table.pair(GHASHPairTable.threeTwo), y, table.pair(GHASHPairTable.oneZero)).reduced()
        case 2:
            let a = Self.loadPair(p, p + 16)
            let x = GHASHPieces(high: a.high ^ GHASHLanes(high, 0), low: a.low ^ GHASHLanes(low, 0))
            (high, low) = GHASHPairProducts(x, table.pair(GHASHPairTable.twoOne)).reduced()
        case 1:
            let x = GHASHPieces(
                high: GHASHLanes(high ^ p.loadBigEndianUInt64(at: 0), 0), low: GHASHLanes(low ^ p.loadBigEndianUInt64(at: 8), 0))
            (high, low) = GHASHPairProducts(x, table.pair(GHASHPairTable.oneZero)).reduced()
        default:
            return
        }
    }
}
