//
// Argon2's permutation P (RFC 9106 §3.6): the BLAKE2b round without message words, with each addition
// `a + b` of G replaced by BlaMka's `a + b + 2 · lo32(a) · lo32(b)` (the multiply-hardening of GB, RFC 9106
// §3.6). The products are of two 32-bit halves, so they fit in 64 bits; the doubling and sums wrap mod 2^64
// as the RFC specifies.

extension BLAKE2bWorkingVector {
    /// Sixteen words loaded from `p` at the given word offsets.
    @inline(__always)
    init(_ p: UnsafePointer<UInt64>, _ o0: Int, _ o1: Int, _ o2: Int, _ o3: Int, _ o4: Int, _ o5: Int, _ o6: Int, _ o7: Int,
         _ o8: Int, _ o9: Int, _ o10: Int, _ o11: Int, _ o12: Int, _ o13: Int, _ o14: Int, _ o15: Int) {
        (v0, v1, v2, v3, v4, v5, v6, v7) = (p[o0], p[o1], p[o2], p[o3], p[o4], p[o5], p[o6], p[o7])
        (v8, v9, v10, v11, v12, v13, v14, v15) = (p[o8], p[o9], p[o10], p[o11], p[o12], p[o13], p[o14], p[o15])
    }

    /// Stores the sixteen words into `p` at the given word offsets.
    @inline(__always)
    func store(_ p: UnsafeMutablePointer<UInt64>, _ o0: Int, _ o1: Int, _ o2: Int, _ o3: Int, _ o4: Int, _ o5: Int, _ o6: Int, _ o7: Int,
               _ o8: Int, _ o9: Int, _ o10: Int, _ o11: Int, _ o12: Int, _ o13: Int, _ o14: Int, _ o15: Int) {
        p[o0] = v0; p[o1] = v1; p[o2] = v2; p[o3] = v3; p[o4] = v4; p[o5] = v5; p[o6] = v6; p[o7] = v7
        p[o8] = v8; p[o9] = v9; p[o10] = v10; p[o11] = v11; p[o12] = v12; p[o13] = v13; p[o14] = v14; p[o15] = v15
    }

    /// `x + y + 2 · lo32(x) · lo32(y)` mod 2^64 (fBlaMka in RFC 9106 §3.6).
    @inline(__always)
    static func blaMka(_ x: UInt64, _ y: UInt64) -> UInt64 {
        let product = (x & 0xffff_ffff) &* (y & 0xffff_ffff)
        return x &+ y &+ (product &<< 1)
    }

    /// GB (RFC 9106 §3.6) on `(a, b, c, d)`.
    @inline(__always)
    static func mixBlaMka(_ a: inout UInt64, _ b: inout UInt64, _ c: inout UInt64, _ d: inout UInt64) {
        a = blaMka(a, b)
        d = (d ^ a).rotatedRight(by: 32)
        c = blaMka(c, d)
        b = (b ^ c).rotatedRight(by: 24)
        a = blaMka(a, b)
        d = (d ^ a).rotatedRight(by: 16)
        c = blaMka(c, d)
        b = (b ^ c).rotatedRight(by: 63)
    }

    /// P (RFC 9106 §3.6): GB on the four columns of the 4 × 4 matrix of words, then on its four diagonals.
    @inline(__always)
    mutating func permuteBlaMka() {
        Self.mixBlaMka(&v0, &v4, &v8, &v12)
        Self.mixBlaMka(&v1, &v5, &v9, &v13)
        Self.mixBlaMka(&v2, &v6, &v10, &v14)
        Self.mixBlaMka(&v3, &v7, &v11, &v15)
        Self.mixBlaMka(&v0, &v5, &v10, &v15)
        Self.mixBlaMka(&v1, &v6, &v11, &v12)
        Self.mixBlaMka(&v2, &v7, &v8, &v13)
        Self.mixBlaMka(&v3, &v4, &v9, &v14)
    }
}
