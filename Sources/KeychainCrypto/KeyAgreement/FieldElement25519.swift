/// An element of GF(2^255 − 19), the field of Curve25519's coordinates (RFC 7748 §4.1).
///
/// The value is `l0 + l1·2^51 + l2·2^102 + l3·2^153 + l4·2^204`, not necessarily below p: only
/// ``encoded()`` reduces it fully. Every operation is straight-line code on the limbs: no branch and no memory
/// index depends on the value, so an operation takes the same time whatever the element.
///
/// Limb bounds, which make the wrapping arithmetic in these files safe:
/// * Decoding, `*`, ``squared()`` and ``times121665()`` return limbs below 2^52 ("reduced").
/// * `+` of two reduced elements and `-` with a reduced subtrahend return limbs below 2^54.
/// * `*`, ``squared()`` and ``times121665()`` accept limbs below 2^54: a product of two limbs is below 2^108
///   and a column of five products, some times 19, below 2^116, which fits `WideProduct`.
struct FieldElement25519 {
    static let limbMask: UInt64 = (1 << 51) - 1

    var l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64, l4: UInt64

    static let zero = FieldElement25519(l0: 0, l1: 0, l2: 0, l3: 0, l4: 0)
    static let one = FieldElement25519(l0: 1, l1: 0, l2: 0, l3: 0, l4: 0)

    init(l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64, l4: UInt64) {
        (self.l0, self.l1, self.l2, self.l3, self.l4) = (l0, l1, l2, l3, l4)
    }

    /// Decodes 32 little-endian bytes as RFC 7748 §5's decodeUCoordinate does: the top bit (bit 255) is
    /// ignored, and values from p to 2^255 − 1 (non-canonical encodings) are accepted as they are; the
    /// arithmetic reduces them.
    ///
    /// - Parameter bytes: At least 32 readable bytes; only the first 32 are read.
    init(decoding bytes: UnsafeRawPointer) {
        let w0 = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        let w1 = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        let w2 = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        let w3 = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        let mask = Self.limbMask
        // Bits 0–50, 51–101, 102–152, 153–203, 204–254; masking the last limb to 51 bits drops bit 255.
        self.init(
            l0: w0 & mask,
            l1: ((w0 >> 51) | (w1 << 13)) & mask,
            l2: ((w1 >> 38) | (w2 << 26)) & mask,
            l3: ((w2 >> 25) | (w3 << 39)) & mask,
            l4: (w3 >> 12) & mask)
    }

    /// Writes the canonical encoding: the value reduced below p, 32 bytes little-endian (RFC 7748 §5's
    /// encodeUCoordinate). The top bit is always 0.
    ///
    /// - Parameter output: At least 32 writable bytes.
    func encode(into output: UnsafeMutableRawPointer) {
        let mask = Self.limbMask
        // One carry pass: limbs below 2^51 but l0, which gets 19 times the carry out of bit 255 (at most
        // 19 · 2 for reduced limbs), so the value is below 2^255 + 2^51 < 2p.
        var (r0, r1, r2, r3, r4) = (l0, l1, l2, l3, l4)
        r1 &+= r0 >> 51; r0 &= mask
        r2 &+= r1 >> 51; r1 &= mask
        r3 &+= r2 >> 51; r2 &= mask
        r4 &+= r3 >> 51; r3 &= mask
        r0 &+= 19 &* (r4 >> 51); r4 &= mask
        // q = 1 exactly when value ≥ p, that is when value + 19 reaches 2^255; the carries compute it exactly.
        var q = (r0 &+ 19) >> 51
        q = (r1 &+ q) >> 51
        q = (r2 &+ q) >> 51
        q = (r3 &+ q) >> 51
        q = (r4 &+ q) >> 51
        // value − q·p = value + 19q − q·2^255: add 19q, carry, and drop the carry out of bit 255.
        r0 &+= 19 &* q
        r1 &+= r0 >> 51; r0 &= mask
        r2 &+= r1 >> 51; r1 &= mask
        r3 &+= r2 >> 51; r2 &= mask
        r4 &+= r3 >> 51; r3 &= mask
        r4 &= mask
        output.storeBytes(of: (r0 | (r1 << 51)).littleEndian, toByteOffset: 0, as: UInt64.self)
        output.storeBytes(of: ((r1 >> 13) | (r2 << 38)).littleEndian, toByteOffset: 8, as: UInt64.self)
        output.storeBytes(of: ((r2 >> 26) | (r3 << 25)).littleEndian, toByteOffset: 16, as: UInt64.self)
        output.storeBytes(of: ((r3 >> 39) | (r4 << 12)).littleEndian, toByteOffset: 24, as: UInt64.self)
    }

    /// The sum, limb by limb, without carrying (see the bounds above).
    @inline(__always)
    static func + (lhs: FieldElement25519, rhs: FieldElement25519) -> FieldElement25519 {
        FieldElement25519(l0: lhs.l0 &+ rhs.l0, l1: lhs.l1 &+ rhs.l1, l2: lhs.l2 &+ rhs.l2, l3: lhs.l3 &+ rhs.l3, l4: lhs.l4 &+ rhs.l4)
    }

    /// The difference, computed as `lhs + 4p − rhs` limb by limb so that no limb goes below zero; `rhs` must
    /// be reduced (limbs below 2^52, under 4p's limbs of 2^53 − 76 and 2^53 − 4).
    @inline(__always)
    static func - (lhs: FieldElement25519, rhs: FieldElement25519) -> FieldElement25519 {
        let fourP0: UInt64 = (1 << 53) - 76, fourP: UInt64 = (1 << 53) - 4
        return FieldElement25519(
            l0: lhs.l0 &+ fourP0 &- rhs.l0, l1: lhs.l1 &+ fourP &- rhs.l1, l2: lhs.l2 &+ fourP &- rhs.l2,
            l3: lhs.l3 &+ fourP &- rhs.l3, l4: lhs.l4 &+ fourP &- rhs.l4)
    }

    /// Swaps `a` and `b` when `bit` is 1 and leaves them when it is 0, with the same instructions either
    /// way (RFC 7748 §5's cswap): a mask of all ones or all zeros selects the XOR of the two.
    ///
    /// - Parameter bit: 0 or 1.
    @inline(__always)
    static func conditionalSwap(_ a: inout FieldElement25519, _ b: inout FieldElement25519, bit: UInt64) {
        let mask = 0 &- bit
        var t = mask & (a.l0 ^ b.l0); a.l0 ^= t; b.l0 ^= t
        t = mask & (a.l1 ^ b.l1); a.l1 ^= t; b.l1 ^= t
        t = mask & (a.l2 ^ b.l2); a.l2 ^= t; b.l2 ^= t
        t = mask & (a.l3 ^ b.l3); a.l3 ^= t; b.l3 ^= t
        t = mask & (a.l4 ^ b.l4); a.l4 ^= t; b.l4 ^= t
    }
}
