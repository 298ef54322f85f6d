import Foundation
import Testing
@_spi(KeychainFileInternals) import KeychainCrypto
@testable import KeychainFile

/// The version 2 header, key slots and header page against a second implementation:
/// `Fixtures/healing/header-v2.json`, written by `Scripts/vectors/header_v2_vectors.py` to
/// Docs/FormatVersion2.md §4 with Python's `cryptography` (PBKDF2, HKDF, HMAC, AES-GCM, Argon2id), `unicodedata`
/// and `reedsolo`. Both ways: Swift encodes the same inputs to the same bytes, and opens Python's page with
/// every credential.
@Suite("Format v2: header, committed slots and header page against Python's")
struct HeaderV2VectorTests {
    struct VectorFile: Decodable {
        struct Slot: Decodable {
            struct KDFParameters: Decodable {
                let id: Int
                let iterations: UInt32?
                let memoryKiB: UInt32?
                let passes: UInt32?
                let lanes: UInt8?
            }
            let label: String
            let kind: Int
            let kdf: KDFParameters?
            let credential: [String: String]
            let slotID: String?
            let salt: String?
            let nonce: String?
            let slot: String
        }
        let fileID: String, epoch: UInt64, epochSalt: String, masterKey: String
        let rewriteEnd: UInt64, rewriteHeadSequence: UInt64, rewriteHeadChain: String, tombstoneHorizonDays: UInt32
        let headerKey: String, recordKey: String, initialChain: String
        let slots: [Slot]
        let header: String, page: String
    }

    static func vectors() throws -> VectorFile {
        try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: RepositoryFiles.url("Fixtures/healing/header-v2.json")))
    }

    static func credential(_ slot: VectorFile.Slot) throws -> Credential {
        if let key = slot.credential["key"] { return .key(SymmetricKey(data: try hex(key))) }
        return .password(slot.credential["password"] ?? "")
    }

    static func kdf(_ parameters: VectorFile.Slot.KDFParameters) -> SlotKDF {
        switch parameters.id {
        case 1: return .pbkdf2(iterations: parameters.iterations ?? 0)
        case 2: return .hkdf
        default: return .argon2id(memoryKiB: parameters.memoryKiB ?? 0, passes: parameters.passes ?? 0, lanes: parameters.lanes ?? 0)
        }
    }

    @Test("Each committed slot encodes to Python's bytes from the same ids, salt and nonce")
    func slotsEncodeAlike() throws {
        let file = try Self.vectors()
        let master = SymmetricKey(data: try hex(file.masterKey))
        for slot in file.slots where slot.kind != 3 {
            let made = try CommittedKeySlot.make(
                for: try Self.credential(slot), kdf: Self.kdf(try #require(slot.kdf)), masterKey: master,
                fileID: try hex(file.fileID), slotID: try hex(try #require(slot.slotID)), salt: try hex(try #require(slot.salt)),
                nonce: try hex(try #require(slot.nonce)))
            var writer = ByteWriter()
            made.encode(into: &writer)
            #expect(writer.bytes == (try hex(slot.slot)), "slot \(slot.label)")
        }
    }

    @Test("The header and its page encode to Python's bytes; keys and C0 agree")
    func headerAndPageEncodeAlike() throws {
        let file = try Self.vectors()
        var slots: [HeaderKeySlot] = []
        for slot in file.slots {
            var reader = ByteReader(try hex(slot.slot))
            slots.append(try HeaderKeySlot.parse(&reader, fileOffset: 0))
            #expect(reader.isAtEnd)
        }
        let header = FileHeaderV2(
            fileID: try hex(file.fileID), epoch: file.epoch, epochSalt: try hex(file.epochSalt), rewriteEnd: file.rewriteEnd,
            rewriteHeadSequence: file.rewriteHeadSequence, rewriteHeadChain: try hex(file.rewriteHeadChain),
            tombstoneHorizonDays: file.tombstoneHorizonDays, slots: slots)
        let keys = try header.epochKeys(masterKey: SymmetricKey(data: try hex(file.masterKey)))
        #expect(keys.header.withUnsafeBytes { Array($0) } == (try hex(file.headerKey)))
        #expect(keys.record.withUnsafeBytes { Array($0) } == (try hex(file.recordKey)))
        #expect(header.initialChainValue(headerKey: keys.header) == (try hex(file.initialChain)))
        let bytes = header.encode(headerKey: keys.header)
        #expect(bytes == (try hex(file.header)))
        #expect(HeaderPage.encode(bytes) == (try hex(file.page)))
        #expect(try FileHeaderV2.parse(try hex(file.header)) == header)
    }

    @Test("Python's page opens with every credential, each through its own slot, legacy included")
    func pageOpensWithEveryCredential() throws {
        let file = try Self.vectors()
        let page = try hex(file.page)
        for (index, slot) in file.slots.enumerated() {
            let opened = try OpenedHeaderV2(pageA: page, pageB: page, credential: try Self.credential(slot))
            #expect(opened.slotIndex == index, "slot \(slot.label)")
            #expect(opened.masterKey.withUnsafeBytes { Array($0) } == (try hex(file.masterKey)))
            #expect(opened.initialChain == (try hex(file.initialChain)))
            #expect(opened.header.rewriteEnd == file.rewriteEnd)
            #expect(opened.pages == [.intact(try hex(file.header)), .intact(try hex(file.header))])
        }
        #expect(throws: KeychainError.wrongCredentials) {
            try OpenedHeaderV2(pageA: page, pageB: page, credential: .password("not this one"))
        }
    }
}
