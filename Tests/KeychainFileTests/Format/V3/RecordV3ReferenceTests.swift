import Foundation
import Testing
@testable import KeychainFile
@_spi(KeychainFileInternals) import KeychainCrypto

/// Version 3's records against the independent Python implementation (Scripts/reference/records_v3.py, written from
/// the byte table of Docs/FormatVersion3.md §2.5.1 with `cryptography`'s HKDF, HMAC and AES-GCM): each decodes the
/// other's records, pages, heads and chain tags, and a page one side made, copied byte for byte by the other into a
/// record of a new epoch, still opens on both.
@Suite("Format v3: records agree with the Python reference", .enabled(if: RecordsV3Script.pythonCryptography))
struct RecordV3ReferenceTests {
    typealias F = RecordV3Fixture

    static let script = RepositoryFiles.url("Scripts/reference/records_v3.py").path

    static func reference(_ arguments: [String]) throws -> (status: Int32, json: [String: Any]) {
        let result = try RecordsV3Script.python([script] + arguments)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any], "\(arguments[0]): \(result.output)")
        return (result.status, json)
    }

    static func text(_ object: Any) throws -> String { String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self) }
    static func hex(_ bytes: [UInt8]) -> String { HexText.lowercase(bytes) }
    static func unhex(_ text: String) -> [UInt8] { KeySlotV3ReferenceTests.unhex(text) }
    static func keyHex(_ key: SymmetricKey) -> String { key.withUnsafeBytes { hex(Array($0)) } }

    /// A generic password both sides describe alike: whole seconds, so that milliseconds carry it exactly.
    struct Item {
        let id: [UInt8]
        let service: String
        let secret: [UInt8]

        var entry: EntryV2 {
            .put(id: try! ItemID(bytes: id), attributes: try! ItemAttributes(itemClass: .genericPassword, values: [
                .service: .string(service), .account: .string("acct"),
                .creationDate: .date(Date(timeIntervalSince1970: 1_700_000_000)), .modificationDate: .date(Date(timeIntervalSince1970: 1_700_000_001)),
            ]), secret: secret)
        }

        var json: [String: Any] {
            ["put": ["id": hex(id), "class": 1, "secret": hex(secret), "attributes": [
                "service": service, "account": "acct", "creationDate": 1_700_000_000_000, "modificationDate": 1_700_000_001_000,
            ] as [String: Any]] as [String: Any]]
        }
    }

    static let items = (1...4).map { n in Item(id: [UInt8](repeating: UInt8(n), count: 16), service: "service \(n)", secret: [UInt8](repeating: UInt8(0x40 + n), count: 10 * n)) }
    static let deletion = (id: [UInt8](repeating: 0xDD, count: 16), time: Int64(-42))

    static func logJSON(epoch: UInt64) -> [String: Any] {
        ["fileID": hex(F.fileID), "epoch": epoch, "chainKey": hex(F.chainKeyBytes(epoch: epoch)), "headsKey": hex(F.headsKeyBytes)]
    }

    static func headsJSON(_ heads: HeadsV3) -> [[String: Any]] {
        heads.groups.map { ["keyID": Int($0.keyID), "startEpoch": $0.startEpoch, "groupSequence": $0.groupSequence, "lastTag": hex($0.lastTag)] }
    }

    static func groupsJSON(_ keyIDs: [UInt8]) -> [[String: Any]] {
        keyIDs.map { ["keyID": Int($0), "key": keyHex($0 == 1 ? F.groupKeyA : F.groupKeyB)] }
    }

    /// What Python's decode printed for a put, as (id, service, secret) in hex.
    static func puts(_ decoded: [String: Any]) -> [String] {
        ((decoded["segments"] as? [[String: Any]]) ?? []).flatMap { ($0["entries"] as? [[String: Any]]) ?? [] }.compactMap { entry in
            guard let put = entry["put"] as? [String: Any], let attributes = put["attributes"] as? [String: Any] else { return nil }
            return "\(put["id"] ?? "")/\(attributes["service"] ?? "")/\(put["secret"] ?? "")"
        }
    }

    static func puts(_ entries: [DecodedEntryV2], bytes: [UInt8], keys: GroupKeysV3) throws -> [String] {
        try entries.compactMap { entry in
            guard case .put(let id, let attributes, let box) = entry, case .string(let service)? = attributes[.service] else { return nil }
            return "\(hex(id.bytes))/\(service)/\(hex(try GroupPageV3.openSecret(box, of: id, in: bytes, keys: keys)))"
        }
    }

    @Test("Swift decodes Python's part and commit: pages of two groups, the heads, the chain tags")
    func swiftDecodesPython() throws {
        var spec = Self.logJSON(epoch: 3)
        spec["kind"] = 3; spec["sequence"] = 1; spec["part"] = 0; spec["previousChain"] = Self.hex(F.c0(epoch: 3)); spec["seed"] = 5
        spec["heads"] = [[String: Any]](); spec["groups"] = Self.groupsJSON([1, 2])
        spec["segments"] = [["seal": ["keyID": 1, "entries": [Self.items[0].json, Self.items[1].json]] as [String: Any]]]
        let part = try Self.reference(["encode", try Self.text(spec)])
        #expect(part.status == 0)
        spec["kind"] = 1; spec["sequence"] = 2; spec["part"] = 1; spec["previousChain"] = try #require(part.json["chainTag"] as? String)
        spec["heads"] = part.json["heads"]
        spec["segments"] = [
            ["seal": ["keyID": 2, "entries": [Self.items[2].json, ["tombstone": ["id": Self.hex(Self.deletion.id), "time": Self.deletion.time] as [String: Any]]]] as [String: Any]],
            ["seal": ["keyID": 1, "entries": [["delete": ["id": Self.hex(Self.items[0].id), "time": 7] as [String: Any]]]] as [String: Any]],
        ]
        let commit = try Self.reference(["encode", try Self.text(spec)])
        let partBytes = Self.unhex(try #require(part.json["record"] as? String)), commitBytes = Self.unhex(try #require(commit.json["record"] as? String))
        let keys = F.keys(epoch: 3)
        var chains: [UInt8: GroupChainV3] = [1: GroupChainV3(keys: F.a, startEpoch: 3), 2: GroupChainV3(keys: F.b, startEpoch: 3)]
        let one = try RecordV3Decoder.decode(partBytes, previousChain: F.c0(epoch: 3), keys: keys, groups: &chains)
        #expect(one.kind == .part && Self.hex(one.chainTag) == part.json["chainTag"] as? String)
        #expect(F.same(F.pages(one).flatMap(\.entries), [Self.items[0].entry, Self.items[1].entry], bytes: partBytes, keys: F.a))
        let two = try RecordV3Decoder.decode(commitBytes, previousChain: one.chainTag, keys: keys, groups: &chains)
        #expect(F.pages(two).map(\.groupSequence) == [1, 2])
        #expect(F.same(F.pages(two)[0].entries, [Self.items[2].entry, .tombstone(id: try ItemID(bytes: Self.deletion.id), time: Self.deletion.time)], bytes: commitBytes, keys: F.b))
        #expect(F.same(F.pages(two)[1].entries, [.delete(id: try ItemID(bytes: Self.items[0].id), time: 7)], bytes: commitBytes, keys: F.a))
        let heads = try #require(two.heads)
        #expect(try Self.text(Self.headsJSON(heads)) == (try Self.text(commit.json["heads"] ?? [])))
        #expect(heads[1]?.groupSequence == 2 && heads[2]?.groupSequence == 1)
    }

    @Test("Python decodes Swift's part and commit, following both groups' chains across them")
    func pythonDecodesSwift() throws {
        var random = SplitMix64(seed: 6)
        let keys = F.keys(epoch: 5)
        let part = try RecordV3Encoder.encode(kind: .part, sequence: 1, part: 0, previousChain: F.c0(epoch: 5),
                                              segments: RecordV3Encoder.pages([Self.items[0].entry], keys: F.b) + RecordV3Encoder.pages([Self.items[1].entry], keys: F.a),
                                              heads: HeadsV3(), keys: keys, using: &random)
        let commit = try RecordV3Encoder.encode(kind: .commit, sequence: 2, part: 1, previousChain: part.chainTag,
                                                segments: RecordV3Encoder.pages([Self.items[2].entry, .delete(id: try ItemID(bytes: Self.deletion.id), time: Self.deletion.time)], keys: F.b),
                                                heads: part.heads, keys: keys, using: &random)
        var request = Self.logJSON(epoch: 5)
        request["previousChain"] = Self.hex(F.c0(epoch: 5))
        request["groups"] = Self.groupsJSON([1, 2]).map { $0.merging(["startEpoch": 5]) { a, _ in a } }
        let one = try Self.reference(["decode", Self.hex(part.bytes), try Self.text(request)])
        #expect(one.status == 0 && one.json["kind"] as? Int == 3 && one.json["chainTag"] as? String == Self.hex(part.chainTag), "\(one.json)")
        #expect(Self.puts(one.json) == [Self.items[0], Self.items[1]].map { "\(Self.hex($0.id))/\($0.service)/\(Self.hex($0.secret))" })
        request["previousChain"] = one.json["chainTag"]
        request["groups"] = (one.json["groups"] as? [[String: Any]] ?? []).map { state in
            state.merging(["key": Self.keyHex(state["keyID"] as? Int == 1 ? F.groupKeyA : F.groupKeyB)]) { a, _ in a }
        }
        let two = try Self.reference(["decode", Self.hex(commit.bytes), try Self.text(request)])
        #expect(two.status == 0 && two.json["chainTag"] as? String == Self.hex(commit.chainTag), "\(two.json)")
        #expect(Self.puts(two.json) == ["\(Self.hex(Self.items[2].id))/\(Self.items[2].service)/\(Self.hex(Self.items[2].secret))"])
        #expect(try Self.text(two.json["heads"] ?? []) == (try Self.text(Self.headsJSON(commit.heads))))
        // Python refuses what Swift refuses: a frame byte, a page tag, a secret box, the chain tag.
        let scanned = try RecordV3Decoder.scan(commit.bytes)
        for at in [9, scanned.segments[0].pageTag.lowerBound, scanned.segments[0].secrets.lowerBound + 3, commit.bytes.count - 1] {
            var damaged = commit.bytes
            damaged[at] ^= 0x20
            #expect(try Self.reference(["decode", Self.hex(damaged), try Self.text(request)]).status == 6, "byte \(at)")
        }
    }

    @Test("A page Python made, copied byte for byte by Swift into a record of another epoch, opens on both sides; and the other way round")
    func copiedAcrossImplementations() throws {
        // Python, epoch 1: A and B.
        var spec = Self.logJSON(epoch: 1)
        spec["kind"] = 1; spec["sequence"] = 1; spec["part"] = 0; spec["previousChain"] = Self.hex(F.c0(epoch: 1)); spec["seed"] = 8
        spec["heads"] = [[String: Any]](); spec["groups"] = Self.groupsJSON([1, 2])
        spec["segments"] = [["seal": ["keyID": 1, "entries": [Self.items[0].json]] as [String: Any]],
                            ["seal": ["keyID": 2, "entries": [Self.items[1].json, Self.items[2].json]] as [String: Any]]]
        let python = Self.unhex(try #require(try Self.reference(["encode", try Self.text(spec)]).json["record"] as? String))
        // Swift, as A's holder: B's segment kept as bytes, then a rewrite into epoch 2.
        var holderA: [UInt8: GroupChainV3] = [1: GroupChainV3(keys: F.a, startEpoch: 1)]
        let read = try RecordV3Decoder.decode(python, previousChain: F.c0(epoch: 1), keys: F.keys(epoch: 1), groups: &holderA)
        let copiedB = F.opaque(read)
        #expect(copiedB.count == 1)
        var random = SplitMix64(seed: 9)
        let rewrite = try RecordV3Encoder.encode(kind: .commit, sequence: 1, part: 0, previousChain: F.c0(epoch: 2),
                                                 segments: RecordV3Encoder.pages([Self.items[3].entry], keys: F.a) + copiedB.map { .copy($0) },
                                                 heads: try #require(read.heads).removing(1), keys: F.keys(epoch: 2), using: &random)
        // Swift, as B's holder, opens it.
        var holderB: [UInt8: GroupChainV3] = [2: GroupChainV3(keys: F.b, startEpoch: 1)]
        let swiftRead = try RecordV3Decoder.decode(rewrite.bytes, previousChain: F.c0(epoch: 2), keys: F.keys(epoch: 2), groups: &holderB)
        #expect(F.same(F.pages(swiftRead).flatMap(\.entries), [Self.items[1].entry, Self.items[2].entry], bytes: rewrite.bytes, keys: F.b))
        // Python, as B's holder, opens it too, and verifies B's chain from the segment alone.
        var request = Self.logJSON(epoch: 2)
        request["previousChain"] = Self.hex(F.c0(epoch: 2))
        request["groups"] = [["keyID": 2, "key": Self.keyHex(F.groupKeyB), "startEpoch": 1] as [String: Any]]
        let pythonRead = try Self.reference(["decode", Self.hex(rewrite.bytes), try Self.text(request)])
        #expect(pythonRead.status == 0 && Self.puts(pythonRead.json).count == 2, "\(pythonRead.json)")
        let verify: [String: Any] = ["fileID": Self.hex(F.fileID), "keyID": 2, "key": Self.keyHex(F.groupKeyB),
                                     "segments": copiedB.map { Self.hex($0.bytes) }, "heads": Self.headsJSON(rewrite.heads)]
        #expect(try Self.reference(["verify-group", try Self.text(verify)]).json["pages"] as? Int == 1)

        // The other way: Python, as A's holder, copies the B segment Swift sealed in epoch 2 into its epoch 3 record.
        let swiftB = try RecordV3Encoder.encode(kind: .commit, sequence: 2, part: 0, previousChain: rewrite.chainTag,
                                                segments: RecordV3Encoder.pages([Self.items[0].entry], keys: F.b), heads: rewrite.heads, keys: F.keys(epoch: 2), using: &random)
        let segmentB = F.opaque(try RecordV3Decoder.decode(swiftB.bytes, previousChain: rewrite.chainTag, keys: F.keys(epoch: 2)))[0]
        var again = Self.logJSON(epoch: 3)
        again["kind"] = 1; again["sequence"] = 1; again["part"] = 0; again["previousChain"] = Self.hex(F.c0(epoch: 3)); again["seed"] = 10
        again["heads"] = Self.headsJSON(swiftB.heads.removing(1)); again["groups"] = Self.groupsJSON([1])
        again["segments"] = [["copy": Self.hex(copiedB[0].bytes)], ["copy": Self.hex(segmentB.bytes)],
                             ["seal": ["keyID": 1, "entries": [Self.items[3].json]] as [String: Any]]]
        let epoch3 = Self.unhex(try #require(try Self.reference(["encode", try Self.text(again)]).json["record"] as? String))
        var holderB3: [UInt8: GroupChainV3] = [2: GroupChainV3(keys: F.b, startEpoch: 1)]
        let third = try RecordV3Decoder.decode(epoch3, previousChain: F.c0(epoch: 3), keys: F.keys(epoch: 3), groups: &holderB3)
        #expect(F.pages(third).map(\.groupSequence) == [1, 2] && holderB3[2]?.sequence == 2)
        #expect(F.same(F.pages(third)[1].entries, [Self.items[0].entry], bytes: epoch3, keys: F.b))
    }
}

/// python3 with `cryptography`, for ``RecordV3ReferenceTests`` (a separate type: a suite's `.enabled(if:)` reads a
/// static of another type, see the slots' ``SlotsV3Script``).
enum RecordsV3Script {
    static let pythonCryptography: Bool = {
        (try? python(["-c", "from cryptography.hazmat.primitives.ciphers.aead import AESGCM; from cryptography.hazmat.primitives.kdf.hkdf import HKDF"]))?.status == 0
    }()

    /// Runs python3 with `arguments`; its status and standard output.
    static func python(_ arguments: [String]) throws -> (status: Int32, output: String) { try SlotsV3Script.python(arguments) }
}
