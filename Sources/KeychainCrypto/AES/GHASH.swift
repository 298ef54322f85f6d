// One file for GHASH and the parts of its multiplier: they share the file-private masks that keep it constant time.
//
// GHASH (NIST SP 800-38D §6.4): the polynomial hash of AES-GCM over GF(2^128), in constant time.
//
// Representation. A 16-byte block is held as two big-endian words (hi = bytes 0…7, lo = bytes 8…15).
// GCM numbers bits from the most significant end, so the coefficient of x^i is bit 127 − i of the 128-bit
// integer hi·2^64 + lo. The carry-less product of two such integers is then the bit-reversed polynomial
// product, off by one position; multiplying handles that with a one-bit shift before reducing modulo
// x^128 + x^7 + x^2 + x + 1.
//
// Constant time. The usual fast GHASH looks up multiples of H in tables indexed by data nibbles, which
// leaks through the cache. Here the 64 × 64-bit carry-less products are computed with ordinary integer
// multiplications on operands thinned out to every fourth bit (`carrylessMultiply`): the integer product
// then equals the carry-less one in every fourth bit, with room for the carries in the gaps. Integer
// multiplication runs in constant time on the processors Swift targets, and nothing here branches on data
// or indexes memory with it.
//
// Two kernels. The one here multiplies by any element with 64 × 64-bit products on ordinary `mul` instructions,
// Karatsuba making three of them a block: it computes the powers of H, the lengths block and the deferred-slot
// corrections (AESGCMDeferredSlot.swift). Runs of blocks — nearly all the work — go through the pair kernel
// (GHASHPairKernel.swift), which does the same arithmetic on 32-bit pieces with SSE2's `pmuludq`, two blocks at
// a time, four blocks to a reduction.

/// The masks selecting every fourth bit: mask k keeps bit positions ≡ k (mod 4).
private let fourthBitMask0: UInt64 = 0x1111_1111_1111_1111
private let fourthBitMask1: UInt64 = 0x2222_2222_2222_2222
private let fourthBitMask2: UInt64 = 0x4444_4444_4444_4444
private let fourthBitMask3: UInt64 = 0x8888_8888_8888_8888
/// Bits 0 … 59: the part of a multiplier split by class; bits 60 … 63 are handled apart (see below).
private let lowSixtyBits: UInt64 = 0x0fff_ffff_ffff_ffff

/// A 64-bit multiplier split for `carrylessMultiply`, precomputed once per GHASH key.
///
/// `p0 … p3` hold bits 0 … 59 by class mod 4 (at most 15 bits each); `top` holds bits 60 … 63.
struct SplitMultiplier {
    var p0, p1, p2, p3, top: UInt64

    @inline(__always)
    init(_ value: UInt64) {
        let low = value & lowSixtyBits
        p0 = low & fourthBitMask0
        p1 = low & fourthBitMask1
        p2 = low & fourthBitMask2
        p3 = low & fourthBitMask3
        top = value & ~lowSixtyBits
    }

    /// The 64-bit value this was split from.
    var value: UInt64 { p0 | p1 | p2 | p3 | top }
}

/// The full 128-bit carry-less product of `x` and the 64-bit value split in `y`.
///
/// With x_i = x & mask_i (bits ≡ i mod 4) and y_j the class-j bits of y below bit 60, every set bit of the
/// integer product x_i·y_j lies at a position ≡ i + j (mod 4), and each such position receives at most 15
/// partial products (y_j has ≤ 15 bits), a count that fits in the 4 bits up to the next position of the same
/// class: the integer sum never carries from one position of a class into the next. Bit p of the XOR of
/// the four products of class p mod 4 is then bit p of the carry-less product; the other bits are carry
/// garbage and are masked off.
///
/// The top four bits of y are the reason for the 15: with them a class could receive 16 partial products.
/// They are multiplied apart, as x_i·top for each i: top has at most one bit per class and x_i's bits are
/// four apart, so every partial product lands on its own position and that integer product is exact.
@inline(__always)
func carrylessMultiply(_ x: UInt64, _ y: SplitMultiplier) -> (high: UInt64, low: UInt64) {
    let x0 = x & fourthBitMask0, x1 = x & fourthBitMask1, x2 = x & fourthBitMask2, x3 = x & fourthBitMask3

    @inline(__always) func mul(_ a: UInt64, _ b: UInt64) -> (high: UInt64, low: UInt64) {
        let product = a.multipliedFullWidth(by: b)
        return (product.high, product.low)
    }
    // Each class is summed and masked before the next is started, which keeps the live values within the
    // general-purpose registers (the multiplications themselves need two fixed ones).
    @inline(__always) func classSum(
        _ a: UInt64, _ b: UInt64, _ c: UInt64, _ d: UInt64, _ e: UInt64, _ f: UInt64, _ g: UInt64, _ h: UInt64,
        mask: UInt64
    ) -> (high: UInt64, low: UInt64) {
        let p = mul(a, b), q = mul(c, d), r = mul(e, f), s = mul(g, h)
        return ((p.high ^ q.high ^ r.high ^ s.high) & mask, (p.low ^ q.low ^ r.low ^ s.low) & mask)
    }

    // 64 ≡ 0 (mod 4), so the high word uses the same masks as the low word.
    let c0 = classSum(x0, y.p0, x1, y.p3, x2, y.p2, x3, y.p1, mask: fourthBitMask0)
    let c1 = classSum(x0, y.p1, x1, y.p0, x2, y.p3, x3, y.p2, mask: fourthBitMask1)
    let c2 = classSum(x0, y.p2, x1, y.p1, x2, y.p0, x3, y.p3, mask: fourthBitMask2)
    let c3 = classSum(x0, y.p3, x1, y.p2, x2, y.p1, x3, y.p0, mask: fourthBitMask3)
    let t0 = mul(x0, y.top), t1 = mul(x1, y.top), t2 = mul(x2, y.top), t3 = mul(x3, y.top)
    let high = c0.high | c1.high | c2.high | c3.high
    let low = c0.low | c1.low | c2.low | c3.low
    return (high ^ t0.high ^ t1.high ^ t2.high ^ t3.high, low ^ t0.low ^ t1.low ^ t2.low ^ t3.low)
}

/// A field element as a multiplier: its halves and the XOR of its halves (for Karatsuba), each split
/// for `carrylessMultiply` once.
struct GHASHMultiplier {
    var high: SplitMultiplier
    var low: SplitMultiplier
    var middle: SplitMultiplier

    init(high: UInt64, low: UInt64) {
        self.high = SplitMultiplier(high)
        self.low = SplitMultiplier(low)
        middle = SplitMultiplier(high ^ low)
    }
}

/// An unreduced 256-bit carry-less product, most significant word first.
struct GHASHProduct {
    var w3: UInt64 = 0, w2: UInt64 = 0, w1: UInt64 = 0, w0: UInt64 = 0

    /// Adds (XORs) the product of the element (`high`, `low`) and `multiplier`.
    @inline(__always)
    mutating func accumulate(high: UInt64, low: UInt64, _ multiplier: GHASHMultiplier) {
        let hh = carrylessMultiply(high, multiplier.high)
        let ll = carrylessMultiply(low, multiplier.low)
        let mm = carrylessMultiply(high ^ low, multiplier.middle)
        // Karatsuba: the middle term is mm ⊕ hh ⊕ ll.
        let middleHigh = mm.high ^ hh.high ^ ll.high
        let middleLow = mm.low ^ hh.low ^ ll.low
        w3 ^= hh.high
        w2 ^= hh.low ^ middleHigh
        w1 ^= ll.high ^ middleLow
        w0 ^= ll.low
    }

    /// Reduces the product modulo x^128 + x^7 + x^2 + x + 1, returning the field element.
    ///
    /// The 255-bit reflected product is first shifted left by one so that the top 128 bits hold the
    /// (reflected) low-degree half and the bottom 128 bits the high-degree half. The high half is folded in
    /// as multiplication by x^128 ≡ 1 + x + x² + x⁷, which in the reflected domain is right shifts by 0, 1,
    /// 2 and 7; the bits those shifts push out are folded in first (the `d` term).
    @inline(__always)
    func reduced() -> (high: UInt64, low: UInt64) {
        let z3 = (w3 << 1) | (w2 >> 63)
        let z2 = (w2 << 1) | (w1 >> 63)
        let x1 = (w1 << 1) | (w0 >> 63)
        let x0 = w0 << 1
        let d = x1 ^ (x0 << 63) ^ (x0 << 62) ^ (x0 << 57)
        let e1 = d >> 1, e0 = (x0 >> 1) | (d << 63)
        let f1 = d >> 2, f0 = (x0 >> 2) | (d << 62)
        let g1 = d >> 7, g0 = (x0 >> 7) | (d << 57)
        return (z3 ^ d ^ e1 ^ f1 ^ g1, z2 ^ x0 ^ e0 ^ f0 ^ g0)
    }
}

/// GHASH keyed with H: H prepared as a multiplier, and H, H², H³, H⁴ laid out for the pair kernel.
///
/// A value that shares its table: the context that made it frees the table, wiped, with ``wipeAndDeallocate()``.
struct GHASHKey {
    var h1: GHASHMultiplier
    let table: GHASHPairTable

    /// Prepares the key from H = AES_K(0¹²⁸), given as its 16 bytes.
    init(hashSubkey: UnsafeRawPointer) {
        let high = hashSubkey.loadBigEndianUInt64(at: 0)
        let low = hashSubkey.loadBigEndianUInt64(at: 8)
        h1 = GHASHMultiplier(high: high, low: low)
        let p2 = GHASHKey.multiply(high, low, h1)
        let p3 = GHASHKey.multiply(p2.high, p2.low, h1)
        let p4 = GHASHKey.multiply(p3.high, p3.low, h1)
        table = GHASHPairTable(h1: (high, low), h2: p2, h3: p3, h4: p4)
    }

    /// Wipes and frees the pair kernel's table. The key must not be used afterwards.
    func wipeAndDeallocate() {
        table.wipeAndDeallocate()
    }

    /// H^exponent, by square-and-multiply, for exponent ≥ 1 (a public length or position, not a secret).
    func power(_ exponent: Int) -> (high: UInt64, low: UInt64) {
        precondition(exponent >= 1, "a power of H")
        var result: (high: UInt64, low: UInt64)? = nil
        var base = (high: h1.high.value, low: h1.low.value)
        var remaining = exponent
        while remaining > 0 {
            if remaining & 1 == 1 {
                if let current = result {
                    result = GHASHKey.multiply(current.high, current.low, GHASHMultiplier(high: base.high, low: base.low))
                } else {
                    result = base
                }
            }
            remaining >>= 1
            if remaining > 0 { base = GHASHKey.multiply(base.high, base.low, GHASHMultiplier(high: base.high, low: base.low)) }
        }
        return result!
    }

    @inline(__always)
    static func multiply(_ high: UInt64, _ low: UInt64, _ multiplier: GHASHMultiplier) -> (high: UInt64, low: UInt64) {
        var product = GHASHProduct()
        product.accumulate(high: high, low: low, multiplier)
        return product.reduced()
    }
}

/// A running GHASH: Y ← (Y ⊕ X) · H for each 16-byte block X.
struct GHASH {
    var high: UInt64 = 0
    var low: UInt64 = 0

    /// Absorbs `count` whole 16-byte blocks from `blocks`.
    @inline(__always)
    mutating func update(blocks: UnsafeRawPointer, count: Int, key: GHASHKey) {
        absorbInPairs(blocks, count: count, table: key.table)
    }

    /// Absorbs `count` bytes, zero-padding a final partial block as GCM requires.
    mutating func update(bytes: UnsafeRawPointer, count: Int, key: GHASHKey) {
        let whole = count / 16
        update(blocks: bytes, count: whole, key: key)
        let rest = count - 16 * whole
        if rest > 0 {
            var block: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &block) { padded in
                padded.baseAddress!.copyMemory(from: bytes + 16 * whole, byteCount: rest)
                update(blocks: UnsafeRawPointer(padded.baseAddress!), count: 1, key: key)
            }
            block = (0, 0)
        }
    }

    /// Absorbs the final length block: the bit lengths of the authenticated data and the ciphertext.
    mutating func updateLengths(authenticatedByteCount: Int, ciphertextByteCount: Int, key: GHASHKey) {
        let aadBits = UInt64(authenticatedByteCount) &* 8
        let textBits = UInt64(ciphertextByteCount) &* 8
        (high, low) = GHASHKey.multiply(high ^ aadBits, low ^ textBits, key.h1)
    }
}
