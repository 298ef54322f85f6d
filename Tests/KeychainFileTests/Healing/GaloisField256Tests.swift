import Testing
@testable import KeychainFile

/// GF(2⁸) against a second, table-free arithmetic: shift-and-add multiplication reduced by 0x11D.
@Suite("Healing: GF(2^8) over 0x11D with α = 2")
struct GaloisField256Tests {
    /// a · b by carry-less multiplication and reduction by the primitive polynomial, one bit at a time.
    static func slowMultiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var product = 0
        var x = Int(a), y = Int(b)
        while y != 0 {
            if y & 1 != 0 { product ^= x }
            x <<= 1
            if x & 0x100 != 0 { x ^= 0x11D }
            y >>= 1
        }
        return UInt8(product)
    }

    @Test("α = 2 generates all 255 nonzero elements, and α⁸ = 0x1D (x⁸ = x⁴ + x³ + x² + 1)")
    func alphaIsPrimitive() {
        let powers = (0..<255).map { GaloisField256.alphaPower($0) }
        #expect(Set(powers).count == 255)
        #expect(!powers.contains(0))
        #expect(GaloisField256.alphaPower(1) == 2)
        #expect(GaloisField256.alphaPower(8) == 0x1D)
        #expect(GaloisField256.alphaPower(255) == 1)
        #expect(GaloisField256.alphaPower(-1) == GaloisField256.alphaPower(254))
        for exponent in 0..<255 {
            #expect(GaloisField256.logarithms[Int(powers[exponent])] == UInt8(exponent))
        }
    }

    @Test("Multiplication agrees with shift-and-add for all 65,536 pairs")
    func multiplicationMatchesShiftAndAdd() {
        var mismatches = 0
        for a in 0...255 {
            for b in 0...255 where GaloisField256.multiply(UInt8(a), UInt8(b)) != Self.slowMultiply(UInt8(a), UInt8(b)) {
                mismatches += 1
            }
        }
        #expect(mismatches == 0)
    }

    @Test("Every nonzero element's inverse multiplies to 1, and division undoes multiplication")
    func inverseAndDivision() {
        for a in 1...255 {
            let element = UInt8(a)
            #expect(Self.slowMultiply(element, GaloisField256.inverse(element)) == 1, "inverse of \(a)")
            for b in 1...255 {
                let product = Self.slowMultiply(element, UInt8(b))
                if GaloisField256.divide(product, by: UInt8(b)) != element {
                    Issue.record("(\(a)·\(b)) / \(b) ≠ \(a)")
                    return
                }
            }
            #expect(GaloisField256.divide(0, by: element) == 0)
        }
    }

    @Test("Powers agree with repeated multiplication, negative exponents with inverses")
    func powers() {
        for a in [0, 1, 2, 3, 0x1D, 0x80, 0xFF] as [UInt8] {
            var expected: UInt8 = 1
            for exponent in 0..<600 {
                #expect(GaloisField256.power(a, exponent) == expected, "\(a)^\(exponent)")
                expected = Self.slowMultiply(expected, a)
            }
            if a != 0 {
                #expect(GaloisField256.power(a, -1) == GaloisField256.inverse(a))
                #expect(Self.slowMultiply(GaloisField256.power(a, -7), GaloisField256.power(a, 7)) == 1)
            }
        }
        #expect(GaloisField256.power(0, 0) == 1)
    }
}
