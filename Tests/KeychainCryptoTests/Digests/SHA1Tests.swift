import Foundation
import Testing
@testable import KeychainCrypto

@Suite("SHA-1 (Insecure)")
struct SHA1Tests {
    struct ExampleFile: Decodable {
        struct Case: Decodable { let name: String; let msg: Hex; let `repeat`: Int?; let digest: Hex }
        let cases: [Case]
    }

    @Test("FIPS 180 examples, including one million 'a'")
    func fipsExamples() throws {
        let file = try Fixtures.json(ExampleFile.self, "sha1/fips180-examples.json")
        #expect(file.cases.count == 4)
        for example in file.cases {
            let unit = example.msg.bytes
            let count = example.repeat ?? 1
            // Feed repeated messages through the streaming interface without building them in memory.
            var hasher = Insecure.SHA1()
            for _ in 0..<count { hasher.update(data: unit) }
            #expect(Array(hasher.finalize()) == example.digest.bytes, "\(example.name)")
            if count == 1 {
                #expect(Array(Insecure.SHA1.hash(data: unit)) == example.digest.bytes, "\(example.name)")
            }
        }
    }

    @Test("NIST SHAVS byte-oriented short and long messages", arguments: ["SHA1ShortMsg.rsp", "SHA1LongMsg.rsp"])
    func shavs(file: String) throws {
        let records = try Fixtures.responseFile("sha1/\(file)").filter { $0.fields["Len"] != nil }
        #expect(records.count == 64 || records.count == 65)
        for record in records {
            let bits = Int(record.fields["Len"]!)!
            let message = Array(try record.hex("Msg").prefix(bits / 8))
            let expected = try record.hex("MD")
            #expect(Array(Insecure.SHA1.hash(data: message)) == expected, "Len = \(bits)")
        }
    }

    @Test("SHAVS messages split at random points give the published digest")
    func streamingMatchesPublished() throws {
        var generator = SeededGenerator(seed: 0x5348_4131)
        var checked = 0
        for file in ["SHA1ShortMsg.rsp", "SHA1LongMsg.rsp"] {
            for record in try Fixtures.responseFile("sha1/\(file)") where record.fields["Len"] != nil {
                let bits = Int(record.fields["Len"]!)!
                let message = Array(try record.hex("Msg").prefix(bits / 8))
                let expected = try record.hex("MD")
                // Three different splits of every message, so pieces straddle block boundaries differently.
                for _ in 0..<3 {
                    var hasher = Insecure.SHA1()
                    for piece in randomSplit(message, using: &generator) { hasher.update(data: piece) }
                    #expect(Array(hasher.finalize()) == expected, "\(file) Len = \(bits)")
                }
                checked += 1
            }
        }
        #expect(checked == 129)
    }

    @Test("Messages around the padding boundary, byte by byte, match the one-shot digest of the SHAVS message")
    func byteAtATime() throws {
        // The long-message file's first case (163 bytes) fed one byte at a time: every pending count 0…63
        // is reached, and the final padding is taken from each.
        let record = try #require(try Fixtures.responseFile("sha1/SHA1LongMsg.rsp").first { $0.fields["Len"] != nil })
        let bits = Int(record.fields["Len"]!)!
        let message = Array(try record.hex("Msg").prefix(bits / 8))
        var hasher = Insecure.SHA1()
        for byte in message { hasher.update(data: [byte]) }
        #expect(Array(hasher.finalize()) == (try record.hex("MD")))
    }

    @Test("finalize leaves the hasher usable, and copies continue independently")
    func valueSemantics() throws {
        var hasher = Insecure.SHA1()
        hasher.update(data: Array("ab".utf8))
        let copy = hasher
        _ = hasher.finalize()
        hasher.update(data: Array("c".utf8))
        // SHA-1("abc") from FIPS 180-2 A.1.
        #expect(hasher.finalize().hexString == "a9993e364706816aba3e25717850c26c9cd0d89d")
        // SHA-1("ab"), computed with Python's hashlib.sha1(b"ab").
        #expect(copy.finalize().hexString == "da23614e02469a0d7c7bd1bdab5c9c474b1904dc")
    }

    @Test("Non-contiguous sequences and slices hash like arrays")
    func inputKinds() {
        let bytes = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let expected = Insecure.SHA1.hash(data: bytes)
        #expect(Insecure.SHA1.hash(data: NonContiguousBytes(bytes: bytes)) == expected)
        #expect(Insecure.SHA1.hash(data: bytes[...]) == expected)
        #expect(Insecure.SHA1.hash(data: Data(bytes)) == expected)
        #expect(Insecure.SHA1.hash(data: bytes[1...]) != expected)
    }

    @Test("Digest size, bytes comparison and description")
    func digestBehaviour() throws {
        let digest = Insecure.SHA1.hash(data: Array("abc".utf8))
        let hex = "a9993e364706816aba3e25717850c26c9cd0d89d"
        #expect(digest.hexString == hex)
        #expect(digest.description.hasSuffix(hex))
        #expect(digest == (try [UInt8](hex: hex)))
        #expect(!(digest == Array((try [UInt8](hex: hex)).dropLast())))
        #expect(Insecure.SHA1Digest.byteCount == 20)
        #expect(Insecure.SHA1.blockByteCount == 64)
        #expect(Array(digest).count == 20)
    }
}
