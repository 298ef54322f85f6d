import Foundation
import Testing
@testable import KeychainCrypto

@Suite("SHA-256")
struct SHA256Tests {
    struct ExampleFile: Decodable {
        struct Case: Decodable { let name: String; let msg: Hex; let `repeat`: Int?; let digest: Hex }
        let cases: [Case]
    }

    struct DifferentialFile: Decodable {
        struct Case: Decodable { let msg: Hex; let digest: Hex }
        let cases: [Case]
    }

    @Test("FIPS 180 examples, including one million 'a'")
    func fipsExamples() throws {
        let file = try Fixtures.json(ExampleFile.self, "sha256/fips180-4-examples.json")
        #expect(file.cases.count == 4)
        for example in file.cases {
            let unit = example.msg.bytes
            let count = example.repeat ?? 1
            // Feed repeated messages through the streaming interface without building them in memory.
            var hasher = SHA256()
            for _ in 0..<count { hasher.update(data: unit) }
            #expect(Array(hasher.finalize()) == example.digest.bytes, "\(example.name)")
            if count == 1 {
                #expect(Array(SHA256.hash(data: unit)) == example.digest.bytes, "\(example.name)")
            }
        }
    }

    @Test("NIST SHAVS byte-oriented short and long messages", arguments: ["SHA256ShortMsg.rsp", "SHA256LongMsg.rsp"])
    func shavs(file: String) throws {
        let records = try Fixtures.responseFile("sha256/\(file)").filter { $0.fields["Len"] != nil }
        #expect(records.count >= 64)
        for record in records {
            let bits = Int(record.fields["Len"]!)!
            let message = Array(try record.hex("Msg").prefix(bits / 8))
            let expected = try record.hex("MD")
            #expect(Array(SHA256.hash(data: message)) == expected, "Len = \(bits)")
        }
    }

    @Test("500 random messages against OpenSSL")
    func differential() throws {
        let file = try Fixtures.json(DifferentialFile.self, "openssl/sha256.json")
        #expect(file.cases.count == 500)
        for (index, vector) in file.cases.enumerated() {
            #expect(Array(SHA256.hash(data: vector.msg.bytes)) == vector.digest.bytes, "case \(index)")
        }
    }

    @Test("Input split at random points gives the one-shot digest")
    func streamingMatchesOneShot() throws {
        let file = try Fixtures.json(DifferentialFile.self, "openssl/sha256.json")
        var generator = SeededGenerator(seed: 0x5348_4132)
        for vector in file.cases {
            var hasher = SHA256()
            for piece in randomSplit(vector.msg.bytes, using: &generator) { hasher.update(data: piece) }
            #expect(Array(hasher.finalize()) == vector.digest.bytes)
        }
    }

    @Test("finalize leaves the hasher usable, and copies continue independently")
    func valueSemantics() {
        var hasher = SHA256()
        hasher.update(data: Array("ab".utf8))
        let copy = hasher
        _ = hasher.finalize()
        hasher.update(data: Array("c".utf8))
        #expect(hasher.finalize() == SHA256.hash(data: Array("abc".utf8)))
        #expect(copy.finalize() == SHA256.hash(data: Array("ab".utf8)))
    }

    @Test("Non-contiguous sequences and slices hash like arrays")
    func inputKinds() {
        let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let expected = SHA256.hash(data: bytes)
        #expect(SHA256.hash(data: NonContiguousBytes(bytes: bytes)) == expected)
        #expect(SHA256.hash(data: bytes[...]) == expected)
        #expect(SHA256.hash(data: Data(bytes)) == expected)
        #expect(SHA256.hash(data: bytes[1...]) != expected)
    }

    @Test("Digest equality, bytes comparison and description")
    func digestBehaviour() {
        let digest = SHA256.hash(data: Array("abc".utf8))
        let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        #expect(digest.hexString == hex)
        #expect(digest.description.hasSuffix(hex))
        #expect(digest == (try! [UInt8](hex: hex)))
        #expect(!(digest == Array((try! [UInt8](hex: hex)).dropLast())))
        #expect(SHA256Digest.byteCount == 32)
    }
}
