// Multiplication in GF(2^255 − 19). A product of five-limb elements has columns at 2^0 … 2^408; since
// 2^255 ≡ 19 (mod p), a term at 2^(255 + 51k) folds into column k times 19. The columns are summed in
// 128 bits and carried back to 51-bit limbs by `carried(_:_:_:_:_:)`.

extension FieldElement25519 {
    /// The product, reduced (limbs below 2^52). Operands' limbs must be below 2^54.
    @inline(__always)
    static func * (a: FieldElement25519, b: FieldElement25519) -> FieldElement25519 {
        // b's limbs times 19 stay below 2^59, so each product below stays below 2^113.
        let b1x19 = b.l1 &* 19, b2x19 = b.l2 &* 19, b3x19 = b.l3 &* 19, b4x19 = b.l4 &* 19
        var t0 = WideProduct(a.l0, times: b.l0)
        t0.add(a.l1, times: b4x19); t0.add(a.l2, times: b3x19); t0.add(a.l3, times: b2x19); t0.add(a.l4, times: b1x19)
        var t1 = WideProduct(a.l0, times: b.l1)
        t1.add(a.l1, times: b.l0); t1.add(a.l2, times: b4x19); t1.add(a.l3, times: b3x19); t1.add(a.l4, times: b2x19)
        var t2 = WideProduct(a.l0, times: b.l2)
        t2.add(a.l1, times: b.l1); t2.add(a.l2, times: b.l0); t2.add(a.l3, times: b4x19); t2.add(a.l4, times: b3x19)
        var t3 = WideProduct(a.l0, times: b.l3)
        t3.add(a.l1, times: b.l2); t3.add(a.l2, times: b.l1); t3.add(a.l3, times: b.l0); t3.add(a.l4, times: b4x19)
        var t4 = WideProduct(a.l0, times: b.l4)
        t4.add(a.l1, times: b.l3); t4.add(a.l2, times: b.l2); t4.add(a.l3, times: b.l1); t4.add(a.l4, times: b.l0)
        return carried(t0, t1, t2, t3, t4)
    }

    /// The square, reduced; the same as `self * self` with the symmetric products computed once.
    @inline(__always)
    func squared() -> FieldElement25519 {
        let d0 = l0 &* 2, d1 = l1 &* 2, d2 = l2 &* 2, d3 = l3 &* 2
        let l3x19 = l3 &* 19, l4x19 = l4 &* 19
        var t0 = WideProduct(l0, times: l0)
        t0.add(d1, times: l4x19); t0.add(d2, times: l3x19)
        var t1 = WideProduct(d0, times: l1)
        t1.add(d2, times: l4x19); t1.add(l3, times: l3x19)
        var t2 = WideProduct(d0, times: l2)
        t2.add(l1, times: l1); t2.add(d3, times: l4x19)
        var t3 = WideProduct(d0, times: l3)
        t3.add(d1, times: l2); t3.add(l4, times: l4x19)
        var t4 = WideProduct(d0, times: l4)
        t4.add(d1, times: l3); t4.add(l2, times: l2)
        return Self.carried(t0, t1, t2, t3, t4)
    }

    /// The element squared `count` times in a row: `self^(2^count)`. `count` is public (a constant of the
    /// inversion chain).
    func squared(times count: Int) -> FieldElement25519 {
        var result = self
        for _ in 0..<count { result = result.squared() }
        return result
    }

    /// The product with 121665 = (486662 − 2) / 4, RFC 7748 §5's a24 for Curve25519, reduced.
    @inline(__always)
    func times121665() -> FieldElement25519 {
        Self.carried(
            WideProduct(l0, times: 121_665), WideProduct(l1, times: 121_665), WideProduct(l2, times: 121_665),
            WideProduct(l3, times: 121_665), WideProduct(l4, times: 121_665))
    }

    /// Carries five column sums (each below 2^117) into 51-bit limbs; the carry out of the top column
    /// re-enters column 0 times 19, and one more carry from limb 0 leaves every limb below 2^52.
    @inline(__always)
    private static func carried(
        _ t0: WideProduct, _ t1: WideProduct, _ t2: WideProduct, _ t3: WideProduct, _ t4: WideProduct
    ) -> FieldElement25519 {
        var c1 = t1, c2 = t2, c3 = t3, c4 = t4
        c1.add(t0.shiftedRight51)
        c2.add(c1.shiftedRight51)
        c3.add(c2.shiftedRight51)
        c4.add(c3.shiftedRight51)
        // The top carry is below 2^67; times 19 below 2^72, so it is added in 128 bits.
        let top = c4.shiftedRight51
        var c0 = WideProduct(top.low, times: 19)
        c0.high = c0.high &+ top.high &* 19
        c0.add(WideProduct(high: 0, low: t0.low51))
        let r0 = c0.low51
        let r1 = c1.low51 &+ c0.shiftedRight51.low
        return FieldElement25519(l0: r0, l1: r1, l2: c2.low51, l3: c3.low51, l4: c4.low51)
    }
}
