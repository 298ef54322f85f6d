//
// BLAKE2b compression function F (RFC 7693 §3.2), twelve rounds spelled out.
//
// Each round's message words are passed already permuted by the SIGMA row of RFC 7693 §2.7 (rows 10 and
// 11 repeat rows 0 and 1), so there is no table lookup at all; the sixteen message words are loaded
// little-endian (RFC 7693 §2.4) into locals once per block.

/// The chaining value `h[0..7]` of BLAKE2b and the byte counter `t` (RFC 7693 §3.3).
struct BLAKE2bState: Sendable {
    var h0, h1, h2, h3, h4, h5, h6, h7: UInt64
    /// The low and high words of the 128-bit count of bytes compressed so far (`t` in RFC 7693).
    var counterLow: UInt64 = 0
    var counterHigh: UInt64 = 0

    /// The initialisation vector of RFC 7693 §2.6 (SHA-512's IV).
    static let iv: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (
        0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
        0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179)

    /// The state for an `outputByteCount`-byte digest with a `keyByteCount`-byte key: the IV with the
    /// parameter block's first word `0x0101kknn` folded into `h[0]` (RFC 7693 §3.3; no salt, no
    /// personalisation, sequential mode).
    ///
    /// - Precondition: `1 ≤ outputByteCount ≤ 64` and `0 ≤ keyByteCount ≤ 64` (checked by the callers).
    init(outputByteCount: Int, keyByteCount: Int) {
        let iv = Self.iv
        h0 = iv.0 ^ 0x0101_0000 ^ (UInt64(keyByteCount) << 8) ^ UInt64(outputByteCount)
        (h1, h2, h3, h4, h5, h6, h7) = (iv.1, iv.2, iv.3, iv.4, iv.5, iv.6, iv.7)
    }

    /// Adds `byteCount` to the 128-bit byte counter.
    @inline(__always)
    mutating func advance(by byteCount: Int) {
        let (low, overflow) = counterLow.addingReportingOverflow(UInt64(byteCount))
        counterLow = low
        if overflow { counterHigh &+= 1 }
    }

    /// Compresses the 128-byte block at `block` (F in RFC 7693 §3.2), with the counter as it stands; the
    /// caller advances the counter first. `isLast` sets the final-block flag `f0 = ~0`.
    ///
    /// - Precondition: `block` points at 128 readable bytes.
    mutating func compress(block p: UnsafeRawPointer, isLast: Bool) {
        let m0 = p.loadLittleEndianUInt64(at: 0), m1 = p.loadLittleEndianUInt64(at: 8)
        let m2 = p.loadLittleEndianUInt64(at: 16), m3 = p.loadLittleEndianUInt64(at: 24)
        let m4 = p.loadLittleEndianUInt64(at: 32), m5 = p.loadLittleEndianUInt64(at: 40)
        let m6 = p.loadLittleEndianUInt64(at: 48), m7 = p.loadLittleEndianUInt64(at: 56)
        let m8 = p.loadLittleEndianUInt64(at: 64), m9 = p.loadLittleEndianUInt64(at: 72)
        let m10 = p.loadLittleEndianUInt64(at: 80), m11 = p.loadLittleEndianUInt64(at: 88)
        let m12 = p.loadLittleEndianUInt64(at: 96), m13 = p.loadLittleEndianUInt64(at: 104)
        let m14 = p.loadLittleEndianUInt64(at: 112), m15 = p.loadLittleEndianUInt64(at: 120)

        let iv = Self.iv
        var v = BLAKE2bWorkingVector(
            v0: h0, v1: h1, v2: h2, v3: h3, v4: h4, v5: h5, v6: h6, v7: h7,
            v8: iv.0, v9: iv.1, v10: iv.2, v11: iv.3,
            v12: iv.4 ^ counterLow, v13: iv.5 ^ counterHigh, v14: isLast ? ~iv.6 : iv.6, v15: iv.7)

        v.round(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15)
        v.round(m14, m10, m4, m8, m9, m15, m13, m6, m1, m12, m0, m2, m11, m7, m5, m3)
        v.round(m11, m8, m12, m0, m5, m2, m15, m13, m10, m14, m3, m6, m7, m1, m9, m4)
        v.round(m7, m9, m3, m1, m13, m12, m11, m14, m2, m6, m5, m10, m4, m0, m15, m8)
        v.round(m9, m0, m5, m7, m2, m4, m10, m15, m14, m1, m11, m12, m6, m8, m3, m13)
        v.round(m2, m12, m6, m10, m0, m11, m8, m3, m4, m13, m7, m5, m15, m14, m1, m9)
        v.round(m12, m5, m1, m15, m14, m13, m4, m10, m0, m7, m6, m3, m9, m2, m8, m11)
        v.round(m13, m11, m7, m14, m12, m1, m3, m9, m5, m0, m15, m4, m8, m6, m2, m10)
        v.round(m6, m15, m14, m9, m11, m3, m0, m8, m12, m2, m13, m7, m1, m4, m10, m5)
        v.round(m10, m2, m8, m4, m7, m6, m1, m5, m15, m11, m9, m14, m3, m12, m13, m0)
        v.round(m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15)
        v.round(m14, m10, m4, m8, m9, m15, m13, m6, m1, m12, m0, m2, m11, m7, m5, m3)

        h0 ^= v.v0 ^ v.v8; h1 ^= v.v1 ^ v.v9; h2 ^= v.v2 ^ v.v10; h3 ^= v.v3 ^ v.v11
        h4 ^= v.v4 ^ v.v12; h5 ^= v.v5 ^ v.v13; h6 ^= v.v6 ^ v.v14; h7 ^= v.v7 ^ v.v15
    }

    /// Stores the first `count` bytes of `h[0..7]`, little-endian (RFC 7693 §3.3), at `output`.
    ///
    /// - Precondition: `0 ≤ count ≤ 64` and `output` points at `count` writable bytes.
    func store(into output: UnsafeMutableRawPointer, count: Int) {
        var words = (h0.littleEndian, h1.littleEndian, h2.littleEndian, h3.littleEndian,
                     h4.littleEndian, h5.littleEndian, h6.littleEndian, h7.littleEndian)
        withUnsafeBytes(of: &words) { output.copyMemory(from: $0.baseAddress!, byteCount: count) }
    }
}
