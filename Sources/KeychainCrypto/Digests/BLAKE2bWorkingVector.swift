//
// The sixteen-word local work vector of BLAKE2b (RFC 7693 §3.2, `v[0..15]`) and its mixing function G
// (§3.1). Argon2's permutation P (RFC 9106 §3.6) mixes the same vector with a multiplication added to G:
// see `BLAKE2bWorkingVector+BlaMka.swift`.
//
// The words are stored properties, not an array, so that after inlining the optimiser keeps them in
// registers; nothing here indexes memory by data or branches on data.

/// The work vector `v[0..15]` of the BLAKE2b compression function.
struct BLAKE2bWorkingVector {
    var v0, v1, v2, v3, v4, v5, v6, v7: UInt64
    var v8, v9, v10, v11, v12, v13, v14, v15: UInt64

    /// G (RFC 7693 §3.1) on `(a, b, c, d)` with message words `x`, `y`; rotation counts R1–R4 = 32, 24,
    /// 16, 63.
    @inline(__always)
    static func mix(_ a: inout UInt64, _ b: inout UInt64, _ c: inout UInt64, _ d: inout UInt64, _ x: UInt64, _ y: UInt64) {
        a = a &+ b &+ x
        d = (d ^ a).rotatedRight(by: 32)
        c = c &+ d
        b = (b ^ c).rotatedRight(by: 24)
        a = a &+ b &+ y
        d = (d ^ a).rotatedRight(by: 16)
        c = c &+ d
        b = (b ^ c).rotatedRight(by: 63)
    }

    /// One round of the compression function: G on the four columns, then on the four diagonals. The
    /// caller passes the message words already permuted by the round's SIGMA row: `s0` is `m[SIGMA[r][0]]`.
    @inline(__always)
    mutating func round(
        _ s0: UInt64, _ s1: UInt64, _ s2: UInt64, _ s3: UInt64, _ s4: UInt64, _ s5: UInt64, _ s6: UInt64, _ s7: UInt64,
        _ s8: UInt64, _ s9: UInt64, _ s10: UInt64, _ s11: UInt64, _ s12: UInt64, _ s13: UInt64, _ s14: UInt64, _ s15: UInt64
    ) {
        Self.mix(&v0, &v4, &v8, &v12, s0, s1)
        Self.mix(&v1, &v5, &v9, &v13, s2, s3)
        Self.mix(&v2, &v6, &v10, &v14, s4, s5)
        Self.mix(&v3, &v7, &v11, &v15, s6, s7)
        Self.mix(&v0, &v5, &v10, &v15, s8, s9)
        Self.mix(&v1, &v6, &v11, &v12, s10, s11)
        Self.mix(&v2, &v7, &v8, &v13, s12, s13)
        Self.mix(&v3, &v4, &v9, &v14, s14, s15)
    }
}

extension UInt64 {
    /// The value rotated right by `count` bits, `0 < count < 64`.
    @inline(__always)
    func rotatedRight(by count: UInt64) -> UInt64 {
        (self &>> count) | (self &<< (64 &- count))
    }
}
