import Testing
@testable import KeychainFile

/// Properties of the codec over seeded random data and damage, against a table-free reference encoder.
///
/// The contract checked: with n parity symbols, e errors and f erasures are always repaired when
/// 2e + f ≤ n; beyond that, `correct` either throws `tooManyErrors` and leaves the codeword as it was, or
/// returns a valid codeword (another codeword the damage came closer to — no decoder can tell) — never
/// something that is not a codeword.
@Suite("Healing: Reed–Solomon properties")
struct ReedSolomonPropertyTests {
    // MARK: - A reference encoder that shares nothing with the codec

    /// g(x) = Π (x + αⁱ) for i in 0..<n, highest degree first, with shift-and-add arithmetic.
    static func referenceGenerator(_ n: Int) -> [UInt8] {
        var generator: [UInt8] = [1]
        var root: UInt8 = 1
        for _ in 0..<n {
            var product = generator + [0]
            for j in generator.indices { product[j + 1] ^= GaloisField256Tests.slowMultiply(generator[j], root) }
            generator = product
            root = GaloisField256Tests.slowMultiply(root, 2)
        }
        return generator
    }

    /// data(x)·xⁿ mod g(x) by schoolbook long division.
    static func referenceParity(_ data: [UInt8], generator: [UInt8]) -> [UInt8] {
        let n = generator.count - 1
        var work = data + [UInt8](repeating: 0, count: n)
        for i in data.indices where work[i] != 0 {
            let coefficient = work[i]
            for j in 1...n { work[i + j] ^= GaloisField256Tests.slowMultiply(generator[j], coefficient) }
        }
        return Array(work.suffix(n))
    }

    /// The allocation-free `parity(of:into:)` over arrays.
    static func parity(_ code: ReedSolomonCode, of data: [UInt8], into parity: inout [UInt8]) throws {
        try data.withUnsafeBytes { bytes in try parity.withUnsafeMutableBytes { try code.parity(of: bytes, into: $0) } }
    }

    static func randomBytes(_ count: Int, _ random: inout TestRandom) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    /// Damages `codeword` at `errors` random positions (each byte changed) and `erasures` other ones (each
    /// set to a random byte, possibly the right one); returns the erasure positions.
    static func damage(
        _ codeword: inout [UInt8], errors: Int, erasures: Int, _ random: inout TestRandom
    ) -> [Int] {
        let positions = Array(codeword.indices.shuffled(using: &random).prefix(errors + erasures))
        for position in positions.prefix(errors) { codeword[position] ^= UInt8.random(in: 1...255, using: &random) }
        for position in positions.dropFirst(errors) { codeword[position] = UInt8.random(in: 0...255, using: &random) }
        return Array(positions.dropFirst(errors))
    }

    // MARK: - Encoding

    @Test(
        "Parity equals schoolbook long division for every data length, in every register width",
        arguments: [2, 3, 7, 8, 9, 16, 17, 24, 25, 32, 33, 40, 64, 65, 128, 254])
    func parityMatchesLongDivision(paritySymbols n: Int) throws {
        var random = TestRandom(seed: UInt64(n) * 0x9E37)
        let code = try ReedSolomonCode(paritySymbols: n)
        let generator = Self.referenceGenerator(n)
        #expect(code.generatorPolynomial == generator)
        for length in 0...code.maximumDataLength {
            let data = Self.randomBytes(length, &random)
            let parity = try code.parity(of: data)
            #expect(parity == Self.referenceParity(data, generator: generator), "n \(n), length \(length)")
            // The allocation-free form, and a collection without contiguous storage, give the same bytes.
            var written = [UInt8](repeating: 0xAA, count: n)
            try Self.parity(code, of: data, into: &written)
            #expect(written == parity)
            #expect(try code.isCodeword(data + parity))
        }
        let fill = try code.parity(of: repeatElement(UInt8(0x5C), count: code.maximumDataLength))
        #expect(fill == Self.referenceParity([UInt8](repeating: 0x5C, count: code.maximumDataLength), generator: generator))
    }

    @Test("Parity is linear, zero for zero data, and zero-length data has all-zero parity")
    func parityIsLinear() throws {
        var random = TestRandom(seed: 0x11)
        let code = try ReedSolomonCode(paritySymbols: 32)
        #expect(try code.parity(of: []) == [UInt8](repeating: 0, count: 32))
        #expect(try code.parity(of: [UInt8](repeating: 0, count: 223)) == [UInt8](repeating: 0, count: 32))
        for _ in 0..<200 {
            let length = Int.random(in: 0...223, using: &random)
            let a = Self.randomBytes(length, &random), b = Self.randomBytes(length, &random)
            let sum = zip(a, b).map { $0 ^ $1 }
            let expected = zip(try code.parity(of: a), try code.parity(of: b)).map { $0 ^ $1 }
            #expect(try code.parity(of: sum) == expected)
        }
    }

    // MARK: - Correction within reach

    @Test(
        "Errors and erasures at exactly 2e + f = n are repaired, every split of the budget",
        arguments: [2, 4, 8, 16, 32, 64])
    func atCapacityIsRepaired(paritySymbols n: Int) throws {
        var random = TestRandom(seed: 0xC0DE + UInt64(n))
        let code = try ReedSolomonCode(paritySymbols: n)
        for errors in 0...(n / 2) {
            let erasures = n - 2 * errors
            for trial in 0..<12 {
                // Full, shortened and one-byte data.
                let length = [code.maximumDataLength, 1, Int.random(in: 0...code.maximumDataLength, using: &random)][trial % 3]
                let data = Self.randomBytes(length, &random)
                let original = data + (try code.parity(of: data))
                var codeword = original
                let erased = Self.damage(&codeword, errors: errors, erasures: erasures, &random)
                let damaged = codeword.indices.filter { codeword[$0] != original[$0] }
                let changed = try code.correct(codeword: &codeword, erasures: erased)
                #expect(codeword == original, "n \(n), \(errors) errors, \(erasures) erasures, length \(length)")
                #expect(changed == damaged)
            }
        }
    }

    @Test("Every single-byte error and every single erasure in a full RS(255,223) codeword is repaired")
    func everySinglePosition() throws {
        var random = TestRandom(seed: 0x255)
        let code = try ReedSolomonCode(paritySymbols: 32)
        let data = Self.randomBytes(223, &random)
        let original = data + (try code.parity(of: data))
        for position in 0..<255 {
            for value in [UInt8(1), 0x80, 0xFF, UInt8.random(in: 1...255, using: &random)] {
                var codeword = original
                codeword[position] ^= value
                #expect(try code.correct(codeword: &codeword) == [position])
                #expect(codeword == original, "error at \(position)")
                codeword[position] ^= value
                #expect(try code.correct(codeword: &codeword, erasures: [position]) == [position])
                #expect(codeword == original, "erasure at \(position)")
            }
        }
    }

    @Test("Every error value at a few positions, and codewords of parity alone (zero-length data)")
    func everyValueAndEmptyData() throws {
        let code = try ReedSolomonCode(paritySymbols: 8)
        let data: [UInt8] = [0x42]
        let original = data + (try code.parity(of: data))
        for position in [0, 4, 8] {
            for value in 1...255 {
                var codeword = original
                codeword[position] ^= UInt8(value)
                #expect(try code.correct(codeword: &codeword) == [position])
                #expect(codeword == original)
            }
        }
        var empty = [UInt8](repeating: 0, count: 8)
        #expect(try code.correct(codeword: &empty) == [])
        var random = TestRandom(seed: 0xE)
        for errors in 0...4 {
            var codeword = [UInt8](repeating: 0, count: 8)
            let erased = Self.damage(&codeword, errors: errors, erasures: 8 - 2 * errors, &random)
            try code.correct(codeword: &codeword, erasures: erased)
            #expect(codeword == [UInt8](repeating: 0, count: 8))
        }
    }

    // MARK: - Beyond reach

    @Test(
        "Beyond 2e + f = n, correct either throws and leaves the codeword, or returns a valid codeword",
        arguments: [2, 4, 8, 32])
    func beyondCapacityNeverReturnsANonCodeword(paritySymbols n: Int) throws {
        var random = TestRandom(seed: 0xBAD + UInt64(n))
        let code = try ReedSolomonCode(paritySymbols: n)
        var refused = 0, decodedElsewhere = 0
        for trial in 0..<3_000 {
            // 2e + f is n + 1 to n + 3: just past the bound, where mistakes would show.
            let erasures = Int.random(in: 0...n, using: &random)
            let errors = (n - erasures) / 2 + 1 + trial % 2
            let length = Int.random(in: max(0, errors + erasures - n)...code.maximumDataLength, using: &random)
            let data = Self.randomBytes(length, &random)
            let original = data + (try code.parity(of: data))
            var codeword = original
            let erased = Self.damage(&codeword, errors: errors, erasures: erasures, &random)
            let received = codeword
            do {
                try code.correct(codeword: &codeword, erasures: erased)
                #expect(try code.isCodeword(codeword), "whatever is returned is a codeword")
                if codeword != original { decodedElsewhere += 1 }
            } catch {
                #expect(error == .tooManyErrors)
                #expect(codeword == received, "a refused codeword is left as it was")
                refused += 1
            }
        }
        #expect(refused > 0, "n \(n): damage beyond reach is refused")
        if n <= 4 { #expect(decodedElsewhere > 0, "n \(n): short codes do reach other codewords") }
    }
}
