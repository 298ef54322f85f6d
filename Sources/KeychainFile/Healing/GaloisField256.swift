/// Arithmetic in GF(2^8), the field of the Reed–Solomon codes in `Healing/`.
///
/// The field is GF(2)[x] / (x⁸ + x⁴ + x³ + x² + 1) — the primitive polynomial 0x11D — with α = 2 (the
/// polynomial x) as the generator of its multiplicative group, the conventions of QR codes, CD/DVD CIRC and
/// Python's `reedsolo` defaults (`prim=0x11d, generator=2`). Addition and subtraction are both XOR;
/// multiplication and division go through tables of logarithms and powers of α, built once on first use.
enum GaloisField256 {
    /// The primitive polynomial that defines the field, with its x⁸ term: 0x11D.
    static let primitivePolynomial = 0x11D

    /// The generator of the multiplicative group, α = 2.
    static let generator: UInt8 = 2

    /// αⁱ for i in 0..<510: the cycle of 255 powers written twice, so that `log a + log b` (at most 508)
    /// indexes the table without a reduction modulo 255.
    static let powers: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 510)
        var value = 1
        for exponent in 0..<255 {
            table[exponent] = UInt8(value)
            table[exponent + 255] = UInt8(value)
            value <<= 1
            if value & 0x100 != 0 { value ^= primitivePolynomial }
        }
        return table
    }()

    /// log_α(a) for a in 1...255, in 0..<255. Entry 0 is 0 and means nothing: zero has no logarithm, and
    /// every function here checks for zero before it looks one up.
    static let logarithms: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 256)
        for exponent in 0..<255 { table[Int(powers[exponent])] = UInt8(exponent) }
        return table
    }()

    /// a · b.
    @inline(__always)
    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        if a == 0 || b == 0 { return 0 }
        return powers[Int(logarithms[Int(a)]) + Int(logarithms[Int(b)])]
    }

    /// a / b.
    ///
    /// - Precondition: `b` is not zero. The decoder checks every divisor it computes from received data
    ///   before dividing, and reports a zero one as an uncorrectable codeword.
    @inline(__always)
    static func divide(_ a: UInt8, by b: UInt8) -> UInt8 {
        precondition(b != 0, "division by zero in GF(2^8)")
        if a == 0 { return 0 }
        return powers[Int(logarithms[Int(a)]) + 255 - Int(logarithms[Int(b)])]
    }

    /// a⁻¹.
    ///
    /// - Precondition: `a` is not zero.
    @inline(__always)
    static func inverse(_ a: UInt8) -> UInt8 {
        precondition(a != 0, "zero has no inverse in GF(2^8)")
        return powers[255 - Int(logarithms[Int(a)])]
    }

    /// aⁿ for any integer n, negative too when a is not zero; 0⁰ is 1 and 0ⁿ is 0 for n > 0.
    ///
    /// - Precondition: `a` is not zero when `exponent` is negative.
    static func power(_ a: UInt8, _ exponent: Int) -> UInt8 {
        if exponent == 0 { return 1 }
        if a == 0 {
            precondition(exponent > 0, "zero has no negative powers in GF(2^8)")
            return 0
        }
        // The remainder of a product of a logarithm (< 255) and any Int, taken without overflow:
        // reduce the exponent modulo 255 first.
        let reduced = ((exponent % 255) + 255) % 255
        return powers[(Int(logarithms[Int(a)]) * reduced) % 255]
    }

    /// αⁿ for any integer n.
    @inline(__always)
    static func alphaPower(_ exponent: Int) -> UInt8 {
        powers[((exponent % 255) + 255) % 255]
    }
}
