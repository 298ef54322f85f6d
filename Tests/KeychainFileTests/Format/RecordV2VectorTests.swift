import Foundation
import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// Version 2 records against a second implementation: `Fixtures/healing/records-v2.json`, written by
/// `Scripts/vectors/record_v2_vectors.py` from Docs/FormatVersion2.md with Python's `cryptography` and the
/// reference's attributes encoder: a commit record of 120 entries over several pages (puts, deletions,
/// tombstones) and a transaction part chained to it.
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
            let chain: String
            let entries: [Entry]
        }
        let fileID: String, epoch: UInt64, initialChain: String, recordKey: String, masterKey: String, secretKey: String
        let records: [Record]
    }

    @Test("Python's records decode to its entries, secrets and chain values, and the secret key derives alike")
    func pythonRecordsDecode() throws {
        let file = try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: RepositoryFiles.url("Fixtures/healing/records-v2.json")))
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
