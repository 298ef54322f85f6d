/// An unsigned 128-bit sum of 64 × 64-bit products, for the field arithmetic of Curve25519.
///
/// Swift's `UInt128` needs macOS 15, so the sum is kept as two 64-bit halves. Every step is straight-line:
/// the carry of an addition is computed with bit operations, never with a comparison that could become a
/// branch, because the values summed are secret.
///
/// Callers keep every sum below 2^117 (see `FieldElement25519`), so nothing here wraps past 128 bits.
struct WideProduct {
    var high: UInt64
    var low: UInt64

    /// The product `a · b`, all 128 bits of it.
    @inline(__always)
    init(_ a: UInt64, times b: UInt64) {
        (high, low) = a.multipliedFullWidth(by: b)
    }

    @inline(__always)
    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Adds the product `a · b`.
    @inline(__always)
    mutating func add(_ a: UInt64, times b: UInt64) {
        add(WideProduct(a, times: b))
    }

    /// Adds another sum.
    @inline(__always)
    mutating func add(_ other: WideProduct) {
        let sum = low &+ other.low
        // The carry out of bit 63, from the top bits of both operands and of the sum (no comparison).
        let carry = ((low & other.low) | ((low | other.low) & ~sum)) >> 63
        low = sum
        high = high &+ other.high &+ carry
    }

    /// The low 51 bits.
    @inline(__always)
    var low51: UInt64 { low & FieldElement25519.limbMask }

    /// The sum shifted right by 51 bits: the carry into the next limb.
    @inline(__always)
    var shiftedRight51: WideProduct {
        WideProduct(high: high >> 51, low: (low >> 51) | (high << 13))
    }
}
