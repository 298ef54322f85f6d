/// The X25519 function of RFC 7748 §5: scalar clamping, the Montgomery ladder on u-coordinates, and the
/// final division by Z.
///
/// Every call runs the same 255 ladder steps, each with the same field operations; the scalar's bits reach
/// the computation only through `FieldElement25519.conditionalSwap`'s masks, never through a branch or a
/// memory index. The clamped scalar and the ladder's points are overwritten with zeros before returning.
enum MontgomeryLadder {
    /// The ladder's working points: (x2 : z2) and (x3 : z3), projective u-coordinates.
    private struct Points {
        var x2 = FieldElement25519.one
        var z2 = FieldElement25519.zero
        var x3: FieldElement25519
        var z3 = FieldElement25519.one
    }

    /// Computes X25519(scalar, u) and writes the 32-byte u-coordinate to `output`.
    ///
    /// - Parameters:
    ///   - scalar: 32 bytes, clamped here (RFC 7748 §5's decodeScalar25519), not in place.
    ///   - u: 32 bytes, decoded as decodeUCoordinate does (top bit ignored, non-canonical values accepted).
    ///   - output: 32 writable bytes for the canonical encoding of the result. An all-zero output means the
    ///     u-coordinate was a point of small order; this function does not judge that.
    static func x25519(scalar: UnsafeRawPointer, u: UnsafeRawPointer, output: UnsafeMutableRawPointer) {
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { clamped in
            let k = clamped.baseAddress!
            k.copyMemory(from: scalar, byteCount: 32)
            clamped[0] &= 248
            clamped[31] &= 127
            clamped[31] |= 64

            let x1 = FieldElement25519(decoding: u)
            var points = Points(x3: x1)
            var swap: UInt64 = 0
            // Bits 254 down to 0; bit 255 is 0 after clamping. The loop index is public.
            for t in stride(from: 254, through: 0, by: -1) {
                let bit = UInt64((clamped[t >> 3] >> UInt8(t & 7)) & 1)
                swap ^= bit
                FieldElement25519.conditionalSwap(&points.x2, &points.x3, bit: swap)
                FieldElement25519.conditionalSwap(&points.z2, &points.z3, bit: swap)
                swap = bit
                ladderStep(&points, x1: x1)
            }
            FieldElement25519.conditionalSwap(&points.x2, &points.x3, bit: swap)
            FieldElement25519.conditionalSwap(&points.z2, &points.z3, bit: swap)

            var result = points.x2 * points.z2.inverted()
            result.encode(into: output)

            secureZero(k, count: 32)
            withUnsafeMutableBytes(of: &points) { secureZero($0.baseAddress!, count: $0.count) }
            withUnsafeMutableBytes(of: &result) { secureZero($0.baseAddress!, count: $0.count) }
            withUnsafeMutableBytes(of: &swap) { secureZero($0.baseAddress!, count: $0.count) }
        }
    }

    /// One step of RFC 7748 §5's ladder: doubles (x2 : z2) and adds it to (x3 : z3), whose difference is x1.
    @inline(__always)
    private static func ladderStep(_ p: inout Points, x1: FieldElement25519) {
        let a = p.x2 + p.z2
        let aa = a.squared()
        let b = p.x2 - p.z2
        let bb = b.squared()
        let e = aa - bb
        let c = p.x3 + p.z3
        let d = p.x3 - p.z3
        let da = d * a
        let cb = c * b
        p.x3 = (da + cb).squared()
        p.z3 = x1 * (da - cb).squared()
        p.x2 = aa * bb
        p.z2 = e * (aa + e.times121665())
    }
}
