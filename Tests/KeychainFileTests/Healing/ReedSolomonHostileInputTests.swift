import Testing
@testable import KeychainFile

/// Every entry point of the codec with lengths and positions that do not fit: each gives a typed error
/// that names the bad value, and none traps. The last test throws seeded garbage at `correct`.
@Suite("Healing: Reed–Solomon refuses hostile input with typed errors")
struct ReedSolomonHostileInputTests {
    @Test("A code needs 2 to 254 parity symbols", arguments: [Int.min, -1, 0, 1, 255, 256, 1_000, Int.max])
    func parityCountOutOfRange(count: Int) {
        #expect(throws: ReedSolomonError.unsupportedParitySymbolCount(count)) { try ReedSolomonCode(paritySymbols: count) }
    }

    @Test("The extreme parity counts 2 and 254 work")
    func extremeParityCounts() throws {
        for n in [2, 254] {
            let code = try ReedSolomonCode(paritySymbols: n)
            let data = [UInt8](repeating: 0x33, count: code.maximumDataLength)
            var codeword = data + (try code.parity(of: data))
            let original = codeword
            codeword[0] ^= 1
            #expect(try code.correct(codeword: &codeword) == [0])
            #expect(codeword == original)
        }
    }

    @Test("Data longer than a codeword allows is refused by both parity forms")
    func dataTooLong() throws {
        let code = try ReedSolomonCode(paritySymbols: 32)
        for length in [224, 255, 256, 10_000] {
            let data = [UInt8](repeating: 1, count: length)
            #expect(throws: ReedSolomonError.dataTooLong(length: length, maximum: 223)) { try code.parity(of: data) }
            var parity = [UInt8](repeating: 0, count: 32)
            #expect(throws: ReedSolomonError.dataTooLong(length: length, maximum: 223)) {
                try ReedSolomonPropertyTests.parity(code, of: data, into: &parity)
            }
        }
    }

    @Test("A parity buffer of the wrong size is refused and left untouched", arguments: [0, 1, 31, 33, 64])
    func parityBufferLength(length: Int) throws {
        let code = try ReedSolomonCode(paritySymbols: 32)
        var parity = [UInt8](repeating: 0xEE, count: length)
        #expect(throws: ReedSolomonError.parityBufferLength(length: length, expected: 32)) {
            try ReedSolomonPropertyTests.parity(code, of: [UInt8](repeating: 9, count: 10), into: &parity)
        }
        #expect(parity.allSatisfy { $0 == 0xEE })
    }

    @Test("Codewords shorter than the parity or longer than 255 bytes are refused", arguments: [0, 1, 15, 256, 300, 70_000])
    func codewordLength(length: Int) throws {
        let code = try ReedSolomonCode(paritySymbols: 16)
        var codeword = [UInt8](repeating: 7, count: length)
        let expected = ReedSolomonError.invalidCodewordLength(length: length, minimum: 16, maximum: 255)
        #expect(throws: expected) { try code.correct(codeword: &codeword) }
        #expect(throws: expected) { try code.correct(codeword: &codeword, erasures: [0]) }
        #expect(throws: expected) { try code.isCodeword(codeword) }
        #expect(codeword == [UInt8](repeating: 7, count: length))
    }

    @Test("Erasure positions outside the codeword are refused", arguments: [Int.min, -1, 40, 41, 255, Int.max])
    func erasureOutOfRange(position: Int) throws {
        let code = try ReedSolomonCode(paritySymbols: 8)
        var codeword = [UInt8](repeating: 0, count: 40)
        #expect(throws: ReedSolomonError.erasureOutOfRange(position: position, codewordLength: 40)) {
            try code.correct(codeword: &codeword, erasures: [3, position])
        }
    }

    @Test("A repeated erasure, and more erasures than parity symbols, are refused")
    func repeatedAndTooManyErasures() throws {
        let code = try ReedSolomonCode(paritySymbols: 8)
        var codeword = [UInt8](repeating: 0, count: 40)
        #expect(throws: ReedSolomonError.repeatedErasure(position: 5)) {
            try code.correct(codeword: &codeword, erasures: [5, 6, 5])
        }
        #expect(throws: ReedSolomonError.tooManyErasures(count: 9, maximum: 8)) {
            try code.correct(codeword: &codeword, erasures: Array(0..<9))
        }
        // Counted before the positions are looked at: a long list costs nothing.
        #expect(throws: ReedSolomonError.tooManyErasures(count: 100_000, maximum: 8)) {
            try code.correct(codeword: &codeword, erasures: [Int](repeating: -1, count: 100_000))
        }
        #expect(codeword == [UInt8](repeating: 0, count: 40))
    }

    @Test("Every error names its values and what to do")
    func descriptions() {
        #expect(ReedSolomonError.unsupportedParitySymbolCount(300).description.contains("2 to 254"))
        #expect(ReedSolomonError.dataTooLong(length: 300, maximum: 223).description.contains("223"))
        #expect(ReedSolomonError.erasureOutOfRange(position: 300, codewordLength: 255).description.contains("300"))
        #expect(ReedSolomonError.tooManyErrors.description.contains("left unchanged"))
    }

    @Test("Seeded garbage — random bytes, lengths, parity counts and erasure lists — never traps")
    func garbage() throws {
        var random = TestRandom(seed: 0x6A5B)
        var codes: [Int: ReedSolomonCode] = [:]
        var outcomes: [String: Int] = [:]
        for _ in 0..<4_000 {
            let n = [2, 3, 8, 16, 32, 100, 254].randomElement(using: &random)!
            let code = try codes[n] ?? ReedSolomonCode(paritySymbols: n)
            codes[n] = code
            let length = Int.random(in: 0...270, using: &random)
            var codeword = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let erasures = (0..<Int.random(in: 0...(n + 2), using: &random)).map { _ in Int.random(in: -2...(length + 2), using: &random) }
            let received = codeword
            do {
                try code.correct(codeword: &codeword, erasures: erasures)
                #expect(try code.isCodeword(codeword))
                outcomes["repaired", default: 0] += 1
            } catch {
                #expect(codeword == received)
                outcomes["\(error)".prefix(24).description, default: 0] += 1
            }
        }
        #expect(outcomes.count >= 5, "the garbage reaches several outcomes: \(outcomes)")
    }
}
