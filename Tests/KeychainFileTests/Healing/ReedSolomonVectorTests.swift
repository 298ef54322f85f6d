import Foundation
import Testing
@testable import KeychainFile

/// The codec against a second implementation: `Fixtures/healing/reedsolomon.json`, written by
/// `Scripts/vectors/reedsolomon_vectors.py` with Python's `reedsolo` (primitive polynomial 0x11d, α = 2,
/// first consecutive root 0 — its defaults, checked by the script). Each case has seeded random data, the
/// parity reedsolo computed, and a codeword damaged within reach (2 × errors + erasures ≤ nsym) that
/// reedsolo repaired to the original message.
@Suite("Healing: Reed–Solomon against reedsolo's vectors")
struct ReedSolomonVectorTests {
    struct VectorFile: Decodable {
        struct Conventions: Decodable {
            let primitivePolynomial: Int
            let generator: Int
            let firstConsecutiveRoot: Int
        }
        struct Case: Decodable {
            let nsym: Int
            let data: String
            let parity: String
            let received: String
            let errors: Int
            let erasures: [Int]
            let message: String
        }
        let conventions: Conventions
        let cases: [Case]
    }

    static func vectors() throws -> VectorFile {
        let url = RepositoryFiles.url("Fixtures/healing/reedsolomon.json")
        return try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: url))
    }

    @Test("The vectors were made with this codec's conventions and cover every kind of case")
    func conventionsAndCoverage() throws {
        let file = try Self.vectors()
        #expect(file.conventions.primitivePolynomial == GaloisField256.primitivePolynomial)
        #expect(file.conventions.generator == Int(GaloisField256.generator))
        #expect(file.conventions.firstConsecutiveRoot == 0)
        let cases = file.cases
        #expect(Set(cases.map(\.nsym)).isSuperset(of: [2, 8, 16, 32, 40, 64, 254]))
        #expect(cases.contains { $0.data.count == 2 }, "one-byte data")
        #expect(cases.contains { $0.nsym == 32 && $0.data.count == 2 * 223 }, "RS(255,223)")
        #expect(cases.contains { $0.errors == $0.nsym / 2 && $0.errors > 0 }, "errors at capacity")
        #expect(cases.contains { $0.erasures.count == $0.nsym }, "erasures at capacity")
        #expect(cases.contains { $0.errors > 0 && !$0.erasures.isEmpty }, "errors and erasures together")
    }

    @Test("Parity equals reedsolo's for every case")
    func parityMatches() throws {
        var codes: [Int: ReedSolomonCode] = [:]
        for (index, vector) in try Self.vectors().cases.enumerated() {
            let code = try codes[vector.nsym] ?? ReedSolomonCode(paritySymbols: vector.nsym)
            codes[vector.nsym] = code
            let data = try [UInt8](hexString: vector.data)
            #expect(try code.parity(of: data) == [UInt8](hexString: vector.parity), "case \(index), nsym \(vector.nsym)")
        }
    }

    @Test("Damaged codewords are repaired to reedsolo's message, and exactly the damaged bytes change")
    func correctionMatches() throws {
        var codes: [Int: ReedSolomonCode] = [:]
        for (index, vector) in try Self.vectors().cases.enumerated() {
            let code = try codes[vector.nsym] ?? ReedSolomonCode(paritySymbols: vector.nsym)
            codes[vector.nsym] = code
            let original = try [UInt8](hexString: vector.data) + [UInt8](hexString: vector.parity)
            let received = try [UInt8](hexString: vector.received)
            var codeword = received
            let changed = try code.correct(codeword: &codeword, erasures: vector.erasures)
            let message = Array(codeword.prefix(codeword.count - vector.nsym))
            #expect(message == (try [UInt8](hexString: vector.message)), "case \(index), nsym \(vector.nsym)")
            #expect(codeword == original, "case \(index)")
            let damaged = received.indices.filter { received[$0] != original[$0] }
            #expect(changed == damaged, "case \(index): the positions reported")
        }
    }
}
