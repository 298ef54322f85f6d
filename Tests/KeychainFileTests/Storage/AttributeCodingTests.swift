import Foundation
import Testing
@testable import KeychainFile

// Plaintexts in this file are assembled field by field from SPEC.md §7.3, never by the encoder under test.

/// `u16 tag ‖ u8 type ‖ u32 length ‖ value`; `length` defaults to the value's real length.
private func field(_ tag: UInt16, _ type: UInt8, length: UInt32? = nil, _ value: [UInt8]) -> [UInt8] {
    let n = length ?? UInt32(value.count)
    return [UInt8(tag >> 8), UInt8(tag & 0xff), type, UInt8(n >> 24), UInt8((n >> 16) & 0xff), UInt8((n >> 8) & 0xff),
            UInt8(n & 0xff)] + value
}

/// An i64 as 8 big-endian bytes.
private func be64(_ value: Int64) -> [UInt8] {
    let bits = UInt64(bitPattern: value)
    return (0..<8).map { UInt8((bits >> (56 - 8 * UInt64($0))) & 0xff) }
}

/// `u8 version ‖ item id ‖ u8 class ‖ u16 count ‖ attributes`; `count` defaults to the number given.
private func plaintext(
    version: UInt8 = 1, itemClass: UInt8 = 1, count: UInt16? = nil, _ attributes: [[UInt8]]
) -> [UInt8] {
    let n = count ?? UInt16(attributes.count)
    return [version] + Array(UInt8(0)...UInt8(15)) + [itemClass, UInt8(n >> 8), UInt8(n & 0xff)] + attributes.flatMap { $0 }
}

/// creationDate = 1,000 ms and modificationDate = 2,000 ms: 15 bytes each, at offsets 20 and 35 when first.
private let created = field(0x0005, 5, be64(1_000))
private let modified = field(0x0006, 5, be64(2_000))

private func decode(_ bytes: [UInt8]) throws(AttributeDecodingError) -> (id: ItemID, attributes: ItemAttributes) {
    // `withUnsafeBytes` rethrows untyped errors; carry the typed one out in a Result.
    let result = bytes.withUnsafeBytes { raw in
        Result { () throws(AttributeDecodingError) in try AttributeCoding.decode(raw) }
    }
    return try result.get()
}

/// One malformed plaintext, the offset the decoder must report and a fragment of its reason.
struct MalformedPlaintext: Sendable, CustomTestStringConvertible {
    let defect: String
    let bytes: [UInt8]
    let offset: Int
    let reason: String
    var testDescription: String { defect }
}

private let malformed: [MalformedPlaintext] = [
    .init(defect: "empty plaintext", bytes: [], offset: 0, reason: "truncated"),
    .init(defect: "encoding version 2", bytes: plaintext(version: 2, [created, modified]), offset: 0, reason: "version 2"),
    .init(defect: "encoding version 0", bytes: plaintext(version: 0, [created, modified]), offset: 0, reason: "version 0"),
    .init(defect: "item id cut after 9 bytes", bytes: Array(plaintext([created, modified]).prefix(10)),
          offset: 1, reason: "item id"),
    .init(defect: "ends before the class byte", bytes: Array(plaintext([created, modified]).prefix(17)),
          offset: 17, reason: "item class"),
    .init(defect: "item class 0", bytes: plaintext(itemClass: 0, [created, modified]), offset: 17,
          reason: "unknown item class 0"),
    .init(defect: "item class 5 (identity is not stored)", bytes: plaintext(itemClass: 5, [created, modified]),
          offset: 17, reason: "unknown item class 5"),
    .init(defect: "count cut after one byte", bytes: Array(plaintext([created, modified]).prefix(19)),
          offset: 18, reason: "attribute count"),
    .init(defect: "count 0", bytes: plaintext(count: 0, []), offset: 18, reason: "count 0"),
    .init(defect: "count 1", bytes: plaintext(count: 1, [created]), offset: 18, reason: "count 1"),
    .init(defect: "count 65", bytes: plaintext(count: 65, [created, modified]), offset: 18, reason: "count 65"),
    .init(defect: "count says 3, two attributes follow", bytes: plaintext(count: 3, [created, modified]),
          offset: 50, reason: "truncated attribute header: 0 of 7"),
    .init(defect: "count says 2, three attributes follow", bytes: plaintext(count: 2, [created, modified,
          field(0x0102, 1, [0x61])]), offset: 50, reason: "8 trailing bytes"),
    .init(defect: "creationDate twice", bytes: plaintext([created, created, modified]), offset: 35,
          reason: "strictly increase"),
    .init(defect: "modificationDate before creationDate", bytes: plaintext([modified, created]), offset: 35,
          reason: "tag 0x0005 after 0x0006"),
    .init(defect: "unknown tag 0x0007", bytes: plaintext([created, modified, field(0x0007, 1, [0x61])]),
          offset: 50, reason: "unknown tag 0x0007"),
    .init(defect: "unknown tag 0x0000 first", bytes: plaintext([field(0x0000, 1, []), created, modified]),
          offset: 20, reason: "unknown tag 0x0000"),
    .init(defect: "unknown tag 0x040F just past canUnwrap", bytes: plaintext(itemClass: 4,
          [created, modified, field(0x040f, 4, [1])]), offset: 50, reason: "unknown tag 0x040F"),
    .init(defect: "server (internet passwords only) in a generic password",
          bytes: plaintext([created, modified, field(0x0201, 1, [0x61])]), offset: 50, reason: "server"),
    .init(defect: "service (generic passwords only) in an internet password",
          bytes: plaintext(itemClass: 2, [created, modified, field(0x0102, 1, [0x61])]), offset: 50,
          reason: "not allowed in internet password items"),
    .init(defect: "keyClass in a certificate", bytes: plaintext(itemClass: 3, [created, modified,
          field(0x0401, 3, be64(1))]), offset: 50, reason: "keyClass"),
    .init(defect: "service typed as bytes", bytes: plaintext([created, modified, field(0x0102, 2, [0x61])]),
          offset: 52, reason: "service: type 2, expected 1"),
    .init(defect: "creationDate typed as integer", bytes: plaintext([field(0x0005, 3, be64(1)), modified]),
          offset: 22, reason: "creationDate: type 3, expected 5"),
    .init(defect: "type code 0", bytes: plaintext([created, modified, field(0x0102, 0, [])]), offset: 52,
          reason: "type 0"),
    .init(defect: "integer (accessible) of length 4", bytes: plaintext([field(0x0002, 3, [0, 0, 0, 1]), created,
          modified]), offset: 23, reason: "length 4, expected 8"),
    .init(defect: "date of length 7", bytes: plaintext([field(0x0005, 5, Array(be64(1).dropFirst())), modified]),
          offset: 23, reason: "length 7, expected 8"),
    .init(defect: "boolean (synchronizable) of length 2", bytes: plaintext([field(0x0003, 4, [0, 1]), created,
          modified]), offset: 23, reason: "length 2, expected 1"),
    .init(defect: "boolean of length 0", bytes: plaintext([field(0x0003, 4, []), created, modified]), offset: 23,
          reason: "length 0, expected 1"),
    .init(defect: "string of 65,536 bytes", bytes: plaintext([created, modified,
          field(0x0102, 1, [UInt8](repeating: 0x61, count: 65_536))]), offset: 53, reason: "length 65536, more than 65535"),
    .init(defect: "bytes length 0xFFFFFFFF with nothing after it", bytes: plaintext([created, modified,
          field(0x0103, 2, length: 0xffff_ffff, [])]), offset: 53, reason: "length 4294967295"),
    .init(defect: "string length 5, 3 bytes present", bytes: plaintext([created, modified,
          field(0x0102, 1, length: 5, [0x61, 0x62, 0x63])]), offset: 53, reason: "truncated value"),
    .init(defect: "date length 8, 3 bytes present", bytes: plaintext(count: 2, [field(0x0005, 5, length: 8, [0, 0, 0])]),
          offset: 23, reason: "truncated value"),
    .init(defect: "attribute header cut after 4 bytes", bytes: plaintext([created, modified, [0x01, 0x02, 0x01, 0x00]]),
          offset: 50, reason: "truncated attribute header: 4 of 7"),
    .init(defect: "invalid UTF-8: a lone 0xFF", bytes: plaintext([created, modified, field(0x0102, 1, [0x61, 0xff])]),
          offset: 57, reason: "service: invalid UTF-8"),
    .init(defect: "invalid UTF-8: overlong NUL C0 80", bytes: plaintext([created, modified,
          field(0x0102, 1, [0xc0, 0x80])]), offset: 57, reason: "invalid UTF-8"),
    .init(defect: "invalid UTF-8: UTF-16 surrogate ED A0 80", bytes: plaintext([created, modified,
          field(0x0101, 1, [0xed, 0xa0, 0x80])]), offset: 57, reason: "account: invalid UTF-8"),
    .init(defect: "invalid UTF-8: sequence cut, E2 82", bytes: plaintext([created, modified,
          field(0x0102, 1, [0xe2, 0x82])]), offset: 57, reason: "invalid UTF-8"),
    .init(defect: "boolean 2", bytes: plaintext([field(0x0003, 4, [2]), created, modified]), offset: 27,
          reason: "boolean 2, expected 0 or 1"),
    .init(defect: "boolean 0xFF", bytes: plaintext([field(0x0003, 4, [0xff]), created, modified]), offset: 27,
          reason: "boolean 255"),
    .init(defect: "accessible 0", bytes: plaintext([field(0x0002, 3, be64(0)), created, modified]), offset: 27,
          reason: "accessible: 0 is outside 1…7"),
    .init(defect: "accessible 8", bytes: plaintext([field(0x0002, 3, be64(8)), created, modified]), offset: 27,
          reason: "accessible: 8 is outside 1…7"),
    .init(defect: "port 65,536", bytes: plaintext(itemClass: 2, [created, modified, field(0x0205, 3, be64(65_536))]),
          offset: 57, reason: "port: 65536 is outside 0…65535"),
    .init(defect: "port −1", bytes: plaintext(itemClass: 2, [created, modified, field(0x0205, 3, be64(-1))]),
          offset: 57, reason: "port: -1"),
    .init(defect: "creator 2^32", bytes: plaintext([created, modified, field(0x0106, 3, be64(1 << 32))]),
          offset: 57, reason: "creator: 4294967296 is outside 0…4294967295"),
    .init(defect: "type −1", bytes: plaintext([created, modified, field(0x0107, 3, be64(-1))]), offset: 57,
          reason: "type: -1"),
    .init(defect: "protocol −1", bytes: plaintext(itemClass: 2, [created, modified, field(0x0203, 3, be64(-1))]),
          offset: 57, reason: "protocol: -1"),
    .init(defect: "authenticationType 2^32", bytes: plaintext(itemClass: 2, [created, modified,
          field(0x0204, 3, be64(1 << 32))]), offset: 57, reason: "authenticationType: 4294967296"),
    .init(defect: "keyClass 3", bytes: plaintext(itemClass: 4, [created, modified, field(0x0401, 3, be64(3))]),
          offset: 57, reason: "keyClass: 3 is outside 0…2"),
    .init(defect: "certificateType -1", bytes: plaintext(itemClass: 3, [created, modified, field(0x0301, 3, be64(-1))]),
          offset: 57, reason: "certificateType: -1 is outside 0…3"),
    .init(defect: "certificateType 4", bytes: plaintext(itemClass: 3, [created, modified, field(0x0301, 3, be64(4))]),
          offset: 57, reason: "certificateType: 4"),
    .init(defect: "one trailing zero byte", bytes: plaintext([created, modified]) + [0], offset: 50,
          reason: "1 trailing bytes"),
    .init(defect: "creationDate missing", bytes: plaintext([modified, field(0x0102, 1, [0x61])]), offset: 18,
          reason: "creationDate missing"),
    .init(defect: "modificationDate missing", bytes: plaintext([created, field(0x0102, 1, [0x61])]), offset: 18,
          reason: "modificationDate missing"),
]

@Suite("Attribute box plaintext (SPEC.md §7.3)")
struct AttributeCodingTests {
    @Test("Every attribute of every class survives encode → decode, and re-encodes to the same bytes",
          arguments: ItemClass.allCases)
    func roundTrip(itemClass: ItemClass) throws {
        var generator = TestRandom(seed: UInt64(itemClass.rawValue))
        for variant in 0..<3 {
            let id = ItemID(using: &generator)
            let attributes = try ItemAttributes(itemClass: itemClass, values: everyAttribute(of: itemClass, variant: variant))
            #expect(attributes.count == Attribute.all.filter { $0.isAllowed(in: itemClass) }.count)
            let encoded = AttributeCoding.encode(id: id, attributes: attributes)
            let decoded = try decode(encoded)
            #expect(decoded.id == id)
            #expect(decoded.attributes == attributes)
            #expect(decoded.attributes.values == attributes.values)
            #expect(AttributeCoding.encode(id: decoded.id, attributes: decoded.attributes) == encoded)
        }
    }

    @Test("The round trips above cover every tag of SPEC.md §8.2")
    func everyTagIsCovered() {
        let covered = Set(ItemClass.allCases.flatMap { everyAttribute(of: $0).keys.map(\.tag) })
        #expect(covered == Set(Attribute.all.map(\.tag)))
        #expect(covered.count == 42)
    }

    @Test("A small generic password encodes to the bytes of SPEC.md §7.3, written out by hand")
    func byteExactEncoding() throws {
        let expected = try hex("""
            01
            000102030405060708090a0b0c0d0e0f
            01
            0006
            0002 03 00000008 0000000000000006
            0003 04 00000001 01
            0005 05 00000008 0000019b76daa800
            0006 05 00000008 ffffffffffffffff
            0102 01 00000002 6162
            0103 02 00000000
            """)
        // version 1; item id 00…0f; class 1 (generic password); 6 attributes:
        // accessible = 6 (afterFirstUnlockThisDeviceOnly); synchronizable = true;
        // creationDate = 1,767,225,600,000 ms = 2026-01-01T00:00:00Z; modificationDate = −1 ms;
        // service = "ab"; generic = no bytes.
        let attributes = try ItemAttributes(itemClass: .genericPassword, values: [
            .accessible: .integer(6),
            .synchronizable: .boolean(true),
            .creationDate: .date(milliseconds: 1_767_225_600_000),
            .modificationDate: .date(milliseconds: -1),
            .service: .string("ab"),
            .generic: .bytes([]),
        ])
        #expect(AttributeCoding.encode(id: sequentialID, attributes: attributes) == expected)

        let decoded = try decode(expected)
        #expect(decoded.id == sequentialID)
        #expect(decoded.attributes == attributes)
        let newYear = try #require(ISO8601DateFormatter().date(from: "2026-01-01T00:00:00Z"))
        #expect(decoded.attributes[.creationDate] == .date(newYear))
        #expect(decoded.attributes[.modificationDate]?.millisecondsSince1970 == -1)
    }

    @Test("Malformed plaintexts are rejected at the offending offset", arguments: malformed)
    func rejects(_ testCase: MalformedPlaintext) {
        do {
            let decoded = try decode(testCase.bytes)
            Issue.record("decoded \(decoded.attributes.count) attributes from a plaintext with: \(testCase.defect)")
        } catch {
            #expect(error.offset == testCase.offset, "\(error)")
            #expect(error.reason.contains(testCase.reason), "\(error)")
        }
    }

    @Test("Values at the edges of every range decode")
    func boundaryValues() throws {
        let accepted: [(UInt8, [[UInt8]])] = [
            (1, [field(0x0002, 3, be64(1)), field(0x0003, 4, [0]), created, modified,
                 field(0x0101, 1, []), field(0x0102, 1, [UInt8](repeating: 0x7a, count: 65_535)),
                 field(0x0103, 2, []), field(0x0106, 3, be64(0)), field(0x0107, 3, be64(0xffff_ffff))]),
            (1, [field(0x0002, 3, be64(7)), field(0x0003, 4, [1]), field(0x0005, 5, be64(Int64.min)),
                 field(0x0006, 5, be64(Int64.max))]),
            (2, [created, modified, field(0x0203, 3, be64(0xffff_ffff)), field(0x0204, 3, be64(0)),
                 field(0x0205, 3, be64(65_535))]),
            (2, [created, modified, field(0x0205, 3, be64(0))]),
            (3, [created, modified, field(0x0301, 3, be64(0)), field(0x0302, 3, be64(0xffff_ffff))]),
            (3, [created, modified, field(0x0301, 3, be64(3)), field(0x0302, 3, be64(0))]),
            (3, [created, modified, field(0x0301, 3, be64(3))]),
            (4, [created, modified, field(0x0401, 3, be64(0)), field(0x0404, 3, be64(0xffff_ffff))]),
            (4, [created, modified, field(0x0401, 3, be64(2)), field(0x0405, 3, be64(0x7fff_ffff)),
                 field(0x0406, 3, be64(0))]),
        ]
        for (itemClass, attributes) in accepted {
            let bytes = plaintext(itemClass: itemClass, attributes)
            let decoded = try decode(bytes)
            #expect(decoded.attributes.count == attributes.count)
            #expect(AttributeCoding.encode(id: decoded.id, attributes: decoded.attributes) == bytes)
        }
    }

    @Test("Every proper prefix of a valid plaintext is rejected, at an offset inside it")
    func truncationAnywhere() throws {
        let attributes = try ItemAttributes(itemClass: .internetPassword, values: everyAttribute(of: .internetPassword))
        let encoded = AttributeCoding.encode(id: sequentialID, attributes: attributes)
        for length in 0..<encoded.count {
            do {
                _ = try decode(Array(encoded.prefix(length)))
                Issue.record("a \(length)-byte prefix of \(encoded.count) bytes decoded")
            } catch {
                #expect(error.offset <= length)
            }
        }
    }

    @Test("The quick check accepts every valid plaintext and only what the full check accepts, with its result",
          arguments: ItemClass.allCases)
    func quickCheckAgreesWithFullCheck(itemClass: ItemClass) throws {
        var generator = TestRandom(seed: 0x7175_6963_6b00 | UInt64(itemClass.rawValue))
        var valid: [[UInt8]] = []
        for variant in 0..<3 {
            let every = try ItemAttributes(itemClass: itemClass, values: everyAttribute(of: itemClass, variant: variant))
            valid.append(AttributeCoding.encode(id: ItemID(using: &generator), attributes: every))
        }
        valid.append(plaintext(itemClass: itemClass.rawValue, [created, modified]))
        // The malformed plaintexts written out by hand above, and random corruptions and truncations of valid ones.
        var candidates = malformed.map(\.bytes)
        for bytes in valid {
            for _ in 0..<3_000 {
                var corrupted = bytes
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    let index = Int.random(in: 0..<corrupted.count, using: &generator)
                    corrupted[index] = Bool.random(using: &generator) ? corrupted[index] ^ (1 << UInt8.random(in: 0...7, using: &generator))
                        : UInt8.random(in: 0...255, using: &generator)
                }
                candidates.append(corrupted)
            }
            candidates.append(contentsOf: (0..<bytes.count).map { Array(bytes.prefix($0)) })
            candidates.append(bytes + [0])
        }
        for bytes in valid {
            bytes.withUnsafeBytes { raw in #expect(AttributeCoding.quickCheck(raw) != nil, "a valid plaintext left to the full check") }
        }
        var disagreements = 0, quickAccepted = 0
        for bytes in candidates + valid {
            bytes.withUnsafeBytes { raw in
                let full = Result { () throws(AttributeDecodingError) in try AttributeCoding.fullCheck(raw) }
                guard let quick = AttributeCoding.quickCheck(raw) else { return }
                quickAccepted += 1
                guard case .success(let checked) = full, checked.id == quick.id, checked.itemClass == quick.itemClass,
                    checked.count == quick.count
                else {
                    disagreements += 1
                    if disagreements <= 5 { Issue.record("the quick check accepted what the full check gives as \(full)") }
                    return
                }
            }
        }
        #expect(disagreements == 0)
        #expect(quickAccepted >= valid.count)
    }

    @Test("Random corruption never traps, and every error points inside the plaintext")
    func randomCorruption() throws {
        let attributes = try ItemAttributes(itemClass: .key, values: everyAttribute(of: .key))
        let encoded = AttributeCoding.encode(id: sequentialID, attributes: attributes)
        var generator = TestRandom(seed: 0x6b63_6631)
        var rejected = 0
        for _ in 0..<5_000 {
            var bytes = encoded
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            do {
                let decoded = try decode(bytes)
                // Whatever decodes must re-encode to exactly the bytes it came from (the format is canonical).
                #expect(AttributeCoding.encode(id: decoded.id, attributes: decoded.attributes) == bytes)
            } catch {
                rejected += 1
                #expect(error.offset >= 0 && error.offset <= bytes.count)
            }
        }
        #expect(rejected > 1_000)
    }
}
