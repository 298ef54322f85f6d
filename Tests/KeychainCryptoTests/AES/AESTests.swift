import Foundation
import Testing
@testable import KeychainCrypto

@Suite("AES block cipher")
struct AESTests {
    struct BlockFile: Decodable {
        struct Case: Decodable { let name: String; let key: Hex; let plaintext: Hex; let ciphertext: Hex }
        let cases: [Case]
    }

    struct CounterFile: Decodable {
        struct Case: Decodable { let name: String; let key: Hex; let initial_counter: Hex; let plaintext: Hex; let ciphertext: Hex }
        let cases: [Case]
    }

    static func encrypt(_ block: [UInt8], _ key: [UInt8]) throws -> [UInt8] {
        var copy = block
        try AES.permute(&copy, key: SymmetricKey(data: key))
        return copy
    }

    static func decrypt(_ block: [UInt8], _ key: [UInt8]) throws -> [UInt8] {
        var copy = block
        try AES.inversePermute(&copy, key: SymmetricKey(data: key))
        return copy
    }

    @Test("FIPS 197 Appendix C.1–C.3 (AES-128, -192, -256), both directions")
    func fips197() throws {
        let file = try Fixtures.json(BlockFile.self, "aes/fips197-c3.json")
        #expect(file.cases.count == 3)
        for vector in file.cases {
            #expect(try Self.encrypt(vector.plaintext.bytes, vector.key.bytes) == vector.ciphertext.bytes, "\(vector.name)")
            #expect(try Self.decrypt(vector.ciphertext.bytes, vector.key.bytes) == vector.plaintext.bytes, "\(vector.name)")
        }
    }

    /// The AESAVS known-answer files are CBC files with an all-zero IV and one block per case, so each
    /// case is a single AES-256 block encryption (and decryption).
    @Test("NIST AESAVS AES-256 known-answer tests", arguments: [
        "CBCGFSbox256.rsp", "CBCKeySbox256.rsp", "CBCVarKey256.rsp", "CBCVarTxt256.rsp",
    ])
    func knownAnswer(file: String) throws {
        let records = try Fixtures.responseFile("aes/nist/\(file)").filter { $0.fields["COUNT"] != nil }
        #expect(records.count >= 10)
        for record in records {
            let key = try record.hex("KEY")
            #expect(try record.hex("IV") == [UInt8](repeating: 0, count: 16))
            let plaintext = try record.hex("PLAINTEXT")
            let ciphertext = try record.hex("CIPHERTEXT")
            if record.section == "[ENCRYPT]" {
                #expect(try Self.encrypt(plaintext, key) == ciphertext, "\(file) encrypt COUNT \(record.fields["COUNT"]!)")
            } else {
                #expect(try Self.decrypt(ciphertext, key) == plaintext, "\(file) decrypt COUNT \(record.fields["COUNT"]!)")
            }
        }
    }

    @Test("NIST AESAVS multi-block message test (CBC built on the block functions)")
    func multiBlock() throws {
        let records = try Fixtures.responseFile("aes/nist/CBCMMT256.rsp").filter { $0.fields["COUNT"] != nil }
        #expect(records.count == 20)
        for record in records {
            let key = try record.hex("KEY")
            let iv = try record.hex("IV")
            let plaintext = try record.hex("PLAINTEXT")
            let ciphertext = try record.hex("CIPHERTEXT")
            if record.section == "[ENCRYPT]" {
                var previous = iv
                var output: [UInt8] = []
                for start in stride(from: 0, to: plaintext.count, by: 16) {
                    let block = zip(plaintext[start..<start + 16], previous).map { $0 ^ $1 }
                    previous = try Self.encrypt(block, key)
                    output += previous
                }
                #expect(output == ciphertext)
            } else {
                var previous = iv
                var output: [UInt8] = []
                for start in stride(from: 0, to: ciphertext.count, by: 16) {
                    let block = Array(ciphertext[start..<start + 16])
                    output += zip(try Self.decrypt(block, key), previous).map { $0 ^ $1 }
                    previous = block
                }
                #expect(output == plaintext)
            }
        }
    }

    @Test("SP 800-38A F.5.1/F.5.2/F.5.5/F.5.6: CTR key stream of the GCM counter path")
    func counterMode() throws {
        let file = try Fixtures.json(CounterFile.self, "aes/sp800-38a-ctr.json")
        #expect(file.cases.count == 4)
        for vector in file.cases {
            let counterBlock = vector.initial_counter.bytes
            let context = try vector.key.bytes.withUnsafeBytes { try AESGCMContext(key: $0) }
            let firstCounter = counterBlock[12...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            // Announced as short (runs of eight blocks) and as long (runs of sixteen, two batches at once).
            for announced in [0, 1024] {
                var output = [UInt8](repeating: 0, count: vector.plaintext.bytes.count)
                // The stream views the schedule without keeping it: the context must outlive it.
                withExtendedLifetime(context) {
                    counterBlock.withUnsafeBytes { nonce in
                        var stream = CounterStream(
                            keys: context.keys.unretained, nonce: nonce.baseAddress!, firstCounter: firstCounter, byteCount: announced)
                        vector.plaintext.bytes.withUnsafeBytes { input in
                            output.withUnsafeMutableBytes { out in
                                stream.apply(to: input.baseAddress!, into: out.baseAddress!, count: input.count)
                            }
                        }
                    }
                }
                #expect(output == vector.ciphertext.bytes, "\(vector.name), \(announced) bytes announced")
            }
        }
    }

    @Test("A batch of eight different blocks encrypts like eight single blocks")
    func batchMatchesSingleBlocks() throws {
        var generator = SeededGenerator(seed: 0xae5)
        for keyBytes in [16, 24, 32] {
            let key = (0..<keyBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let keys = try key.withUnsafeBytes { try AESRoundKeys(key: $0, direction: .encryption) }
            let decryptionKeys = try key.withUnsafeBytes { try AESRoundKeys(key: $0, direction: .decryption) }
            var blocks = (0..<128).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let original = blocks
            var singly: [UInt8] = []
            for start in stride(from: 0, to: 128, by: 16) {
                singly += try Self.encrypt(Array(blocks[start..<start + 16]), key)
            }
            blocks.withUnsafeMutableBytes { transformBlocks($0.baseAddress!, count: 8, keys: keys, direction: .encryption) }
            #expect(blocks == singly)
            blocks.withUnsafeMutableBytes { transformBlocks($0.baseAddress!, count: 8, keys: decryptionKeys, direction: .decryption) }
            #expect(blocks == original)
        }
    }

    @Test("Two batches encrypted together give what each gives alone, for every key size")
    func pairMatchesTwoBatches() throws {
        var generator = SeededGenerator(seed: 0x9a1e)
        for trial in 0..<300 {
            let keyBytes = [16, 24, 32][trial % 3]
            let key = (0..<keyBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let keys = try key.withUnsafeBytes { try AESRoundKeys(key: $0, direction: .encryption) }
            let input = (0..<256).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var alone = [UInt8](repeating: 0, count: 256), together = [UInt8](repeating: 0, count: 256)
            input.withUnsafeBytes { raw in
                var first = AESPlanes(transposing: raw.baseAddress!), second = AESPlanes(transposing: raw.baseAddress! + 128)
                var pair = AESPlanesPair(first: first, second: second)
                first.encrypt(with: keys)
                second.encrypt(with: keys)
                pair.encrypt(with: keys.unretained)
                alone.withUnsafeMutableBytes { first.storeTransposed(to: $0.baseAddress!); second.storeTransposed(to: $0.baseAddress! + 128) }
                together.withUnsafeMutableBytes {
                    pair.first.storeTransposed(to: $0.baseAddress!)
                    pair.second.storeTransposed(to: $0.baseAddress! + 128)
                }
            }
            #expect(together == alone, "trial \(trial), \(keyBytes)-byte key")
        }
    }

    @Test("Wrong key and block sizes are typed errors")
    func sizes() {
        var block = [UInt8](repeating: 0, count: 16)
        for size in [0, 1, 15, 17, 20, 31, 33, 64] {
            #expect(throws: CryptoKitError.incorrectKeySize) { try AES.permute(&block, key: SymmetricKey(data: [UInt8](repeating: 1, count: size))) }
        }
        var short = [UInt8](repeating: 0, count: 15)
        #expect(throws: CryptoKitError.incorrectParameterSize) { try AES.permute(&short, key: SymmetricKey(size: .bits256)) }
        var long = [UInt8](repeating: 0, count: 32)
        #expect(throws: CryptoKitError.incorrectParameterSize) { try AES.inversePermute(&long, key: SymmetricKey(size: .bits256)) }
    }
}
