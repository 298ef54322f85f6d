import Foundation
import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// Version 2 records against a second implementation: `Fixtures/healing/records-v2.json`, written by
/// `Scripts/vectors/record_v2_vectors.py` to Docs/FormatVersion2.md §5 with Python's `cryptography`, hashlib and
/// the reference's attributes encoder: a commit record of 120 entries over several pages (puts, deletions,
/// tombstones) and a transaction part chained to it. Both ways: Swift decodes Python's records, and encodes the
/// same entries with the same nonces to the same bytes.
@Suite("Format v2: records against Python's")
struct RecordV2VectorTests {
    struct VectorFile: Decodable {
        struct Entry: Decodable {
            let kind: Int
            let id: String
            let secret: String?
            let attributes: String?
            let time: Int64?
        }
        struct Record: Decodable {
            let bytes: String
            let kind: Int
            let sequence: UInt64
            let part: UInt32
            let chain: String
            let nonces: [String]
            let entries: [Entry]
        }
        let fileID: String, epoch: UInt64, initialChain: String, recordKey: String, masterKey: String, secretKey: String
        let records: [Record]
    }

    static func vectors() throws -> VectorFile {
        try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: RepositoryFiles.url("Fixtures/healing/records-v2.json")))
    }

    /// Hands out the given nonces in order, as `AES.GCM.Nonce(using:)` draws them: two words each, the first
    /// eight bytes and then the last four, in the machine's (little-endian) order.
    struct NonceReplay: RandomNumberGenerator {
        var words: [UInt64] = []
        var drawn = 0

        init(_ nonces: [[UInt8]]) {
            func word(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) } }
            for nonce in nonces { words += [word(nonce[0..<8]), word(nonce[8..<12])] }
        }

        /// Whether exactly the nonces listed were drawn (past them, zeros are handed out and counted).
        var exhausted: Bool { drawn == words.count }

        mutating func next() -> UInt64 {
            defer { drawn += 1 }
            return drawn < words.count ? words[drawn] : 0
        }
    }

    @Test("Swift's encoder, given Python's entries and nonces, writes Python's records byte for byte")
    func swiftEncodesAlike() throws {
        let file = try Self.vectors()
        let fileID = try hex(file.fileID)
        let secretKey = try RecordKeysV2.secretKey(masterKey: SymmetricKey(data: try hex(file.masterKey)), fileID: fileID)
        let keys = try RecordKeysV2(fileID: fileID, epoch: file.epoch, recordKey: SymmetricKey(data: try hex(file.recordKey)), secretKey: secretKey)
        var chain = try hex(file.initialChain)
        for expected in file.records {
            var entries: [EntryV2] = []
            for entry in expected.entries {
                switch entry.kind {
                case 1:
                    let plaintext = try hex(try #require(entry.attributes))
                    let result = plaintext.withUnsafeBytes { bytes -> Result<(id: ItemID, attributes: ItemAttributes), AttributeDecodingError> in
                        do throws(AttributeDecodingError) {
                            return .success(try AttributeCoding.decode(bytes))
                        } catch {
                            return .failure(error)
                        }
                    }
                    let decoded = try result.get()
                    #expect(decoded.id.bytes == (try hex(entry.id)))
                    entries.append(.put(id: decoded.id, attributes: decoded.attributes, secret: try hex(try #require(entry.secret))))
                case 2, 3:
                    let id = try ItemID(bytes: try hex(entry.id)), time = try #require(entry.time)
                    entries.append(entry.kind == 2 ? .delete(id: id, time: time) : .tombstone(id: id, time: time))
                default:
                    Issue.record("entry kind \(entry.kind)")
                }
            }
            var nonces = NonceReplay(try expected.nonces.map { try hex($0) })
            let kind = try #require(RecordV2.Kind(rawValue: UInt8(expected.kind)))
            let record = try RecordV2Encoder.encode(
                entries, kind: kind, sequence: expected.sequence, part: expected.part, previousChain: chain, keys: keys, using: &nonces)
            #expect(record.bytes == (try hex(expected.bytes)), "record \(expected.sequence)")
            #expect(record.chain == (try hex(expected.chain)))
            #expect(nonces.exhausted, "record \(expected.sequence): \(nonces.drawn) of \(nonces.words.count) nonce words drawn")
            chain = record.chain
        }
    }

    @Test("Python's records decode to its entries, secrets and chain values, and the secret key derives alike")
    func pythonRecordsDecode() throws {
        let file = try Self.vectors()
        let fileID = try hex(file.fileID)
        let secretKey = try RecordKeysV2.secretKey(masterKey: SymmetricKey(data: try hex(file.masterKey)), fileID: fileID)
        #expect(secretKey.withUnsafeBytes { Array($0) } == (try hex(file.secretKey)))
        let keys = try RecordKeysV2(fileID: fileID, epoch: file.epoch, recordKey: SymmetricKey(data: try hex(file.recordKey)), secretKey: secretKey)
        let log = try file.records.map { try hex($0.bytes) }.reduce([], +)
        var offset = 0
        var chain = try hex(file.initialChain)
        for expected in file.records {
            let record = try RecordV2Decoder.decode(log, at: offset, previousChain: chain, keys: keys)
            #expect(Int(record.kind.rawValue) == expected.kind && record.sequence == expected.sequence)
            let wantChain = try hex(expected.chain)
            #expect(record.chain == wantChain)
            #expect(record.entries.count == expected.entries.count)
            for (got, want) in zip(record.entries, expected.entries) {
                switch got {
                case .put(let id, let attributes, let box):
                    let wantID = try hex(want.id), wantAttributes = try hex(try #require(want.attributes))
                    let wantSecret = try hex(try #require(want.secret))
                    let secret = try RecordV2Decoder.openSecret(box, of: id, in: log, keys: keys)
                    #expect(want.kind == 1 && id.bytes == wantID)
                    #expect(AttributeCoding.encode(id: id, attributes: attributes) == wantAttributes)
                    #expect(secret == wantSecret)
                case .delete(let id, let time), .tombstone(let id, let time):
                    let wantID = try hex(want.id)
                    #expect(want.kind == (got == .delete(id: id, time: time) ? 2 : 3))
                    #expect(id.bytes == wantID && time == want.time)
                }
            }
            let pages = try RecordV2Decoder.scan(log, at: offset).pages.count
            #expect(pages >= (expected.entries.count > 100 ? 2 : 1))
            chain = record.chain
            offset = record.end
        }
        #expect(offset == log.count)
    }
}
