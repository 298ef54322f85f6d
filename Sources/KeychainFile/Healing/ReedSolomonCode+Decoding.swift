/// Decoding: errors at unknown positions and erasures at known ones, by syndromes, Forney syndromes,
/// Berlekamp–Massey, Chien search and Forney's algorithm.
///
/// Polynomials in this file are arrays of coefficients lowest degree first (index = degree), unlike
/// codewords, whose first byte is the highest-degree coefficient. Position p of a codeword of N bytes is
/// the coefficient of x^(N−1−p); its error locator is X = α^(N−1−p).
extension ReedSolomonCode {
    /// Repairs `codeword` (data followed by parity) in place, when its damage is within the code's reach.
    ///
    /// Corrects e errors at unknown positions and the bytes at the f `erasures` (positions known or
    /// suspected to be bad, whatever they hold) whenever 2e + f ≤ `paritySymbols`. After correcting, it
    /// checks that the result is a codeword and throws otherwise, so what it returns is always a valid
    /// codeword; with more damage than 2e + f ≤ n allows it either throws or, when the damage has moved the
    /// codeword within reach of another one, returns that other codeword — no decoder can tell them apart.
    /// On a throw, `codeword` is unchanged.
    ///
    /// - Parameters:
    ///   - codeword: `paritySymbols` to 255 bytes: 0 to `maximumDataLength` data bytes, then the parity.
    ///   - erasures: distinct positions in the codeword whose bytes are known to be unreliable; at most
    ///     `paritySymbols` of them.
    /// - Returns: the positions whose bytes were changed, ascending (erasures that held the right byte are
    ///   not listed); empty when the codeword was already valid.
    /// - Throws: `ReedSolomonError.invalidCodewordLength`, `.tooManyErasures`, `.erasureOutOfRange` or
    ///   `.repeatedErasure` for input that does not fit the code; `.tooManyErrors` when the damage is beyond
    ///   repair.
    @discardableResult
    package func correct(codeword: inout [UInt8], erasures: [Int] = []) throws(ReedSolomonError) -> [Int] {
        try checkLength(of: codeword)
        let length = codeword.count
        let n = paritySymbols
        guard erasures.count <= n else { throw .tooManyErasures(count: erasures.count, maximum: n) }
        var named = [UInt64](repeating: 0, count: 4)  // one bit per position 0..<256
        for position in erasures {
            guard position >= 0 && position < length else {
                throw .erasureOutOfRange(position: position, codewordLength: length)
            }
            let bit = UInt64(1) << UInt64(position & 63)
            guard named[position >> 6] & bit == 0 else { throw .repeatedErasure(position: position) }
            named[position >> 6] |= bit
        }

        let received = remainder(of: codeword)
        if received.allSatisfy({ $0 == 0 }) { return [] }
        let syndromes = Self.syndromes(ofRemainder: received)

        // Γ(x) = Π (1 + Xₖx) over the erasures.
        let erasureDegrees = erasures.map { length - 1 - $0 }
        var erasureLocator: [UInt8] = [1]
        for degree in erasureDegrees {
            erasureLocator = Self.product(erasureLocator, [1, GaloisField256.alphaPower(degree)])
        }
        // Forney syndromes: coefficients f...n−1 of Γ(x)·S(x). The erasures' terms cancel in them, so they
        // are the syndromes of the errors alone, one for each parity symbol the erasures left.
        let erasureCount = erasures.count
        var forneySyndromes = [UInt8](repeating: 0, count: n - erasureCount)
        for k in erasureCount..<n {
            var value: UInt8 = 0
            for i in 0...erasureCount { value ^= GaloisField256.multiply(erasureLocator[i], syndromes[k - i]) }
            forneySyndromes[k - erasureCount] = value
        }
        let (errorLocator, errorCount) = Self.berlekampMassey(forneySyndromes)
        guard 2 * errorCount <= n - erasureCount else { throw .tooManyErrors }
        let errorDegrees = errorCount == 0 ? [] : Self.chienSearch(errorLocator, codewordLength: length)
        // A locator whose roots are not all distinct positions of this codeword, outside the erasures, did
        // not come from a correctable pattern.
        guard errorDegrees.count == errorCount else { throw .tooManyErrors }
        for degree in errorDegrees {
            let position = length - 1 - degree
            if named[position >> 6] & (UInt64(1) << UInt64(position & 63)) != 0 { throw .tooManyErrors }
        }

        // Forney's algorithm with the errata locator Ψ = Λ·Γ and evaluator Ω = S·Ψ mod xⁿ: the value at
        // locator X is Y = X·Ω(X⁻¹) / Ψ′(X⁻¹) (first consecutive root 0, characteristic 2).
        let errataLocator = Self.product(errorLocator, erasureLocator)
        let evaluator = Array(Self.product(syndromes, errataLocator).prefix(n))
        var corrected = codeword
        var changed: [Int] = []
        for degree in erasureDegrees + errorDegrees {
            let inverseLogarithm = (255 - degree % 255) % 255
            let numerator = Self.evaluateLowestFirst(evaluator, atLogarithm: inverseLogarithm)
            // Ψ′(x) = Σ over odd i of ψᵢ·xⁱ⁻¹ in characteristic 2.
            var denominator: UInt8 = 0
            var i = 1
            while i < errataLocator.count {
                denominator ^= GaloisField256.multiply(
                    errataLocator[i], GaloisField256.alphaPower(inverseLogarithm * (i - 1)))
                i += 2
            }
            guard denominator != 0 else { throw .tooManyErrors }
            let magnitude = GaloisField256.multiply(
                GaloisField256.alphaPower(degree), GaloisField256.divide(numerator, by: denominator))
            if magnitude != 0 {
                corrected[length - 1 - degree] ^= magnitude
                changed.append(length - 1 - degree)
            }
        }
        // The proof of the repair: the result must be a codeword, whatever the algebra above concluded.
        guard remainder(of: corrected).allSatisfy({ $0 == 0 }) else { throw .tooManyErrors }
        codeword = corrected
        return changed.sorted()
    }

    /// The shortest linear recurrence (connection polynomial Λ, lowest degree first, and its length L)
    /// that generates `sequence` — Massey's form of Berlekamp's algorithm. For syndromes of ν ≤ len/2
    /// errors, Λ(x) = Π (1 + Xₖx).
    static func berlekampMassey(_ sequence: [UInt8]) -> (locator: [UInt8], length: Int) {
        let count = sequence.count
        var connection = [UInt8](repeating: 0, count: count + 1)
        connection[0] = 1
        var previous = connection
        var length = 0
        var gap = 1
        var previousDiscrepancy: UInt8 = 1
        for r in 0..<count {
            var discrepancy = sequence[r]
            if length > 0 {
                for i in 1...length { discrepancy ^= GaloisField256.multiply(connection[i], sequence[r - i]) }
            }
            if discrepancy == 0 {
                gap += 1
                continue
            }
            let scale = GaloisField256.divide(discrepancy, by: previousDiscrepancy)
            let before = connection
            // connection −= scale · x^gap · previous; terms past degree `count` cannot arise from a valid
            // recurrence of this sequence and are dropped (the length check afterwards rejects the result).
            if gap <= count {
                for i in 0...(count - gap) where previous[i] != 0 {
                    connection[i + gap] ^= GaloisField256.multiply(scale, previous[i])
                }
            }
            if 2 * length <= r {
                length = r + 1 - length
                previous = before
                previousDiscrepancy = discrepancy
                gap = 1
            } else {
                gap += 1
            }
        }
        return (Array(connection.prefix(length + 1)), length)
    }

    /// Sⱼ = C(αʲ) for j in 0..<n, computed as R(αʲ) from the remainder R = C mod g (highest degree
    /// first), since g(αʲ) = 0. Term by term: coefficient rᵢ of x^d adds rᵢ·α^(jd) to Sⱼ, and the logarithm
    /// of that term grows by d from one j to the next.
    static func syndromes(ofRemainder remainder: [UInt8]) -> [UInt8] {
        let powers = GaloisField256.powers, logarithms = GaloisField256.logarithms
        let n = remainder.count
        var syndromes = [UInt8](repeating: 0, count: n)
        for i in 0..<n where remainder[i] != 0 {
            let degree = n - 1 - i  // < 254, so one subtraction keeps the logarithm below 255
            var logarithm = Int(logarithms[Int(remainder[i])])
            for j in 0..<n {
                syndromes[j] ^= powers[logarithm]
                logarithm += degree
                if logarithm >= 255 { logarithm -= 255 }
            }
        }
        return syndromes
    }

    /// The degrees e in 0..<codewordLength with Λ(α⁻ᵉ) = 0 — the error positions' locators — by Chien
    /// search: term λᵢ·α^(−ie) is the previous degree's term times α⁻ⁱ, a step of −i in its logarithm.
    /// The sums are built term by term over all degrees, then scanned for zeros. Λ has at most deg Λ roots;
    /// the caller compares their number with the locator's length.
    static func chienSearch(_ locator: [UInt8], codewordLength: Int) -> [Int] {
        let powers = GaloisField256.powers, logarithms = GaloisField256.logarithms
        var sums = [UInt8](repeating: locator[0], count: codewordLength)
        for i in 1..<max(1, locator.count) where locator[i] != 0 {
            let step = i % 255
            var logarithm = Int(logarithms[Int(locator[i])])
            for degree in 0..<codewordLength {
                sums[degree] ^= powers[logarithm]
                logarithm -= step
                if logarithm < 0 { logarithm += 255 }
            }
        }
        return sums.indices.filter { sums[$0] == 0 }
    }

    /// a(x)·b(x), coefficients in the same order as the inputs.
    static func product(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: a.count + b.count - 1)
        for i in a.indices where a[i] != 0 {
            for j in b.indices { result[i + j] ^= GaloisField256.multiply(a[i], b[j]) }
        }
        return result
    }

    /// p(αᵏ) for p lowest degree first, k in 0..<255, by Horner's rule.
    static func evaluateLowestFirst(_ polynomial: [UInt8], atLogarithm k: Int) -> UInt8 {
        let powers = GaloisField256.powers, logarithms = GaloisField256.logarithms
        var value: UInt8 = 0
        for coefficient in polynomial.reversed() {
            value = (value == 0 ? 0 : powers[Int(logarithms[Int(value)]) + k]) ^ coefficient
        }
        return value
    }
}
