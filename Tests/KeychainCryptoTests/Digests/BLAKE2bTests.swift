import Foundation
import Testing
@testable import KeychainCrypto

@Suite("BLAKE2b")
struct BLAKE2bTests {
    struct RFCFile: Decodable {
        struct Case: Decodable { let name: String; let msg: Hex; let outlen: Int; let digest: Hex }
        let cases: [Case]
    }

    struct UnkeyedKATFile: Decodable {
        struct Case: Decodable { let `in`: Hex; let out: Hex }
        let cases: [Case]
    }

    struct DifferentialFile: Decodable {
        struct Case: Decodable { let msg: Hex; let key: Hex; let outlen: Int; let digest: Hex }
        let cases: [Case]
    }

    /// The records of the reference `blake2b-kat.txt`: `in:`, `key:` and `hash:` lines (tab after the
    /// colon), records separated by a blank line.
    static func keyedKAT() throws -> [(input: [UInt8], key: [UInt8], hash: [UInt8])] {
        let text = String(decoding: try Fixtures.data("blake2/blake2b-kat.txt"), as: UTF8.self)
        var records: [(input: [UInt8], key: [UInt8], hash: [UInt8])] = []
        var fields: [String: String] = [:]
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) + [""]
        for line in lines {
            if line.isEmpty {
                if let input = fields["in"], let key = fields["key"], let hash = fields["hash"] {
                    records.append((try [UInt8](hex: input), try [UInt8](hex: key), try [UInt8](hex: hash)))
                }
                fields = [:]
                continue
            }
            let parts = line.split(separator: ":", maxSplits: 1)
            fields[String(parts[0])] = parts.count == 2 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        }
        return records
    }

    static func digest(_ message: [UInt8], key: [UInt8], outputByteCount: Int) throws -> [UInt8] {
        Array(try BLAKE2b.hash(data: message, key: SymmetricKey(data: key), outputByteCount: outputByteCount))
    }

    @Test("RFC 7693 Appendix A: BLAKE2b-512(\"abc\")")
    func rfc7693() throws {
        let file = try Fixtures.json(RFCFile.self, "blake2/rfc7693.json")
        #expect(file.cases.count == 1)
        for vector in file.cases {
            #expect(Array(try BLAKE2b.hash(data: vector.msg.bytes, outputByteCount: vector.outlen)) == vector.digest.bytes)
            #expect(Array(BLAKE2b512.hash(data: vector.msg.bytes)) == vector.digest.bytes, "\(vector.name)")
            #expect(BLAKE2b512.hash(data: vector.msg.bytes).hexString == vector.digest.description)
        }
    }

    @Test("Reference blake2b-kat.txt: 256 inputs of 0–255 bytes under the 64-byte key 00…3f")
    func keyedKnownAnswers() throws {
        let records = try Self.keyedKAT()
        #expect(records.count == 256)
        for (index, record) in records.enumerated() {
            #expect(record.input.count == index && record.key.count == 64)
            #expect(try Self.digest(record.input, key: record.key, outputByteCount: 64) == record.hash, "in length \(index)")
        }
    }

    @Test("Reference blake2-kat.json: 256 unkeyed inputs of 0–255 bytes, through BLAKE2b and BLAKE2b512")
    func unkeyedKnownAnswers() throws {
        let file = try Fixtures.json(UnkeyedKATFile.self, "blake2/blake2b-kat-unkeyed.json")
        #expect(file.cases.count == 256)
        for (index, vector) in file.cases.enumerated() {
            #expect(Array(try BLAKE2b.hash(data: vector.in.bytes)) == vector.out.bytes, "in length \(index)")
            #expect(Array(BLAKE2b512.hash(data: vector.in.bytes)) == vector.out.bytes, "in length \(index)")
        }
    }

    @Test("500 random messages, keys and output lengths against hashlib.blake2b")
    func differential() throws {
        let file = try Fixtures.json(DifferentialFile.self, "blake2/blake2b_hashlib.json")
        #expect(file.cases.count == 500)
        for (index, vector) in file.cases.enumerated() {
            let digest = try Self.digest(vector.msg.bytes, key: vector.key.bytes, outputByteCount: vector.outlen)
            #expect(digest == vector.digest.bytes, "case \(index)")
        }
    }

    @Test("Input split at random points, copied hashers and non-contiguous input give the one-shot digest")
    func streamingMatchesOneShot() throws {
        let file = try Fixtures.json(DifferentialFile.self, "blake2/blake2b_hashlib.json")
        var generator = SeededGenerator(seed: 0x424c_4b32)
        for (index, vector) in file.cases.enumerated() {
            var hasher = try BLAKE2b(outputByteCount: vector.outlen, key: SymmetricKey(data: vector.key.bytes))
            let pieces = randomSplit(vector.msg.bytes, using: &generator)
            for piece in pieces { hasher.update(data: piece) }
            #expect(Array(hasher.finalize()) == vector.digest.bytes, "case \(index)")
            // finalize leaves the hasher unchanged: a second call gives the same digest.
            #expect(hasher.finalize() == vector.digest.bytes, "case \(index)")

            var copy = try BLAKE2b(outputByteCount: vector.outlen, key: SymmetricKey(data: vector.key.bytes))
            copy.update(data: NonContiguousBytes(bytes: vector.msg.bytes))
            #expect(copy.finalize() == hasher.finalize(), "case \(index)")
        }
    }

    @Test("Output lengths outside 1…64 and keys over 64 bytes are typed errors; the limits themselves work")
    func limits() throws {
        for length in [0, -1, 65, Int.max] {
            #expect(throws: CryptoKitError.incorrectParameterSize) { try BLAKE2b(outputByteCount: length) }
            #expect(throws: CryptoKitError.incorrectParameterSize) { try BLAKE2b.hash(data: [1], outputByteCount: length) }
        }
        #expect(throws: CryptoKitError.incorrectKeySize) {
            try BLAKE2b(key: SymmetricKey(data: [UInt8](repeating: 7, count: 65)))
        }
        #expect(try BLAKE2b.hash(data: [1], outputByteCount: 1).byteCount == 1)
        #expect(try BLAKE2b.hash(data: [1], key: SymmetricKey(data: [UInt8](repeating: 7, count: 64))).byteCount == 64)
        // An empty key is the unkeyed hash.
        #expect(try BLAKE2b.hash(data: [1, 2, 3], key: SymmetricKey(data: [UInt8]())) == Array(BLAKE2b512.hash(data: [1, 2, 3])))
    }

    @Test("Digests compare by value: equal bytes are equal, a different length or one flipped bit is not")
    func digestEquality() throws {
        let digest = try BLAKE2b.hash(data: Array("abc".utf8), outputByteCount: 32)
        var bytes = Array(digest)
        #expect(digest == bytes)
        #expect(digest == (try BLAKE2b.hash(data: Array("abc".utf8), outputByteCount: 32)))
        #expect(digest != (try BLAKE2b.hash(data: Array("abc".utf8), outputByteCount: 31)))
        #expect(digest != (try BLAKE2b.hash(data: Array("abd".utf8), outputByteCount: 32)))
        #expect(BLAKE2b512.hash(data: Array("abc".utf8)) != BLAKE2b512.hash(data: Array("abd".utf8)))
        bytes[31] ^= 1
        #expect(!(digest == bytes))
        #expect(digest.description == "BLAKE2b-256: \(digest.hexString)")
    }
}
