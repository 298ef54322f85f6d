extension FieldElement25519 {
    /// The inverse, as `self^(p − 2)` by Fermat's little theorem (RFC 7748 §5), with a fixed chain of
    /// 254 squarings and 11 multiplications: the same steps for every value. Zero maps to zero.
    func inverted() -> FieldElement25519 {
        // Names give the exponent: z11 = self^11; z2_5_0 = self^(2^5 − 1), and so on.
        let z2 = squared()
        let z8 = z2.squared(times: 2)
        let z9 = z8 * self
        let z11 = z9 * z2
        let z2_5_0 = z11.squared() * z9
        let z2_10_0 = z2_5_0.squared(times: 5) * z2_5_0
        let z2_20_0 = z2_10_0.squared(times: 10) * z2_10_0
        let z2_40_0 = z2_20_0.squared(times: 20) * z2_20_0
        let z2_50_0 = z2_40_0.squared(times: 10) * z2_10_0
        let z2_100_0 = z2_50_0.squared(times: 50) * z2_50_0
        let z2_200_0 = z2_100_0.squared(times: 100) * z2_100_0
        let z2_250_0 = z2_200_0.squared(times: 50) * z2_50_0
        // (2^250 − 1) · 2^5 + 11 = 2^255 − 21 = p − 2.
        return z2_250_0.squared(times: 5) * z11
    }
}
