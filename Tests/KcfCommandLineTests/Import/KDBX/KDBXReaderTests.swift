import Foundation
import Testing
import KeychainTestSupport
@testable import kcf

/// The KDBX 4 reader against databases written by pykeepass (Fixtures/kdbx, Scripts/make-kdbx-fixtures.py):
/// every entry compared with what pykeepass reads back (NAME.json, written by pykeepass, not by kcf).
@Suite("KDBX reader")
struct KDBXReaderTests {
    struct Expected: Decodable {
        struct Entry: Decodable {
            let title, username, password, url, notes, group: String
            let customFields, attachments: [String]
            let historyCount: Int
            let expires, otp: Bool
        }
        let password: String
        let version: String
        let entries: [Entry]
        let recycled: [Entry]
    }

    static let fixtures = ["aeskdf-aes256-gzip", "aeskdf-aes256-plain", "argon2d-chacha20-gzip", "argon2id-chacha20-plain-4.1",
                           "argon2id-aes256-gzip-4.1", "empty"]

    static func fixture(_ name: String) throws -> (bytes: [UInt8], expected: Expected) {
        let bytes = Array(try Data(contentsOf: RepositoryFiles.url("Fixtures/kdbx/\(name).kdbx")))
        let expected = try JSONDecoder().decode(Expected.self, from: Data(contentsOf: RepositoryFiles.url("Fixtures/kdbx/\(name).json")))
        return (bytes, expected)
    }

    @Test("each fixture reads to pykeepass's entries: strings, groups, custom fields, attachments, history, expiry, recycle bin",
          arguments: fixtures)
    func matchesPykeepass(name: String) throws {
        let (bytes, expected) = try Self.fixture(name)
        let contents = try KDBXReader.read(bytes, password: expected.password)
        #expect("4.\(contents.minorVersion)" == expected.version)
        let database = try KDBXDatabase(contents.document)
        func comparable(_ entry: KDBXEntry) -> [String] {
            [entry.string("Title"), entry.string("UserName"), entry.string("Password"), entry.string("URL"), entry.string("Notes"),
             entry.group, entry.customKeys.filter { $0 != "otp" }.sorted().joined(separator: ","),
             entry.attachments.sorted().joined(separator: ","), String(entry.historyCount), String(entry.expires),
             String(entry.customKeys.contains("otp"))]
        }
        func comparable(_ entry: Expected.Entry) -> [String] {
            [entry.title, entry.username, entry.password, entry.url, entry.notes, entry.group, entry.customFields.joined(separator: ","),
             entry.attachments.joined(separator: ","), String(entry.historyCount), String(entry.expires), String(entry.otp)]
        }
        let live = database.entries.filter { !$0.recycled }.map(comparable).sorted { $0[0] < $1[0] }
        let recycled = database.entries.filter(\.recycled).map(comparable).sorted { $0[0] < $1[0] }
        #expect(live == expected.entries.map(comparable).sorted { $0[0] < $1[0] })
        #expect(recycled == expected.recycled.map(comparable).sorted { $0[0] < $1[0] })
    }

    @Test("key files: KeePass's XML 2.0 key file with a password, a hashed file without one; a wrong key file is a wrong password",
          arguments: [("keyfile-v2-and-password", "v2.keyx"), ("keyfile-hashed-only", "hashed.key")])
    func keyFiles(name: String, keyFile: String) throws {
        let (bytes, expected) = try Self.fixture(name)
        let key = try KDBXKeyFile.key(Array(try Data(contentsOf: RepositoryFiles.url("Fixtures/kdbx/" + keyFile))))
        let contents = try KDBXReader.read(bytes, password: expected.password.isEmpty ? nil : expected.password, keyFileKey: key)
        let titles = try KDBXDatabase(contents.document).entries.filter { !$0.recycled }.map { $0.string("Title") }.sorted()
        #expect(titles == expected.entries.map(\.title).sorted())
        var other = key
        other[0] ^= 1
        #expect(throws: KDBXError.wrongPassword) {
            try KDBXReader.read(bytes, password: expected.password.isEmpty ? nil : expected.password, keyFileKey: other)
        }
        #expect(throws: KDBXError.wrongPassword) { try KDBXReader.read(bytes, password: expected.password) }
    }

    @Test("key file formats: 32 raw bytes, 64 hex digits, XML 1.0 base64, XML 2.0 whose hash does not match, anything else hashed")
    func keyFileFormats() throws {
        let raw = [UInt8](repeating: 0xAB, count: 32)
        #expect(try KDBXKeyFile.key(raw) == raw)
        #expect(try KDBXKeyFile.key(Array(String(repeating: "ab", count: 32).utf8)) == raw)
        let v1 = "<KeyFile><Meta><Version>1.00</Version></Meta><Key><Data>" + Data(raw).base64EncodedString() + "</Data></Key></KeyFile>"
        #expect(try KDBXKeyFile.key(Array(v1.utf8)) == raw)
        let v2 = "<KeyFile><Meta><Version>2.0</Version></Meta><Key><Data Hash=\"00000000\">" + String(repeating: "AB", count: 32) + "</Data></Key></KeyFile>"
        #expect(throws: KDBXError.damaged("the key file's data does not match its hash (the file was altered)")) { try KDBXKeyFile.key(Array(v2.utf8)) }
        let other = Array("not a key".utf8)
        // SHA-256 of "not a key", by Python's hashlib.
        #expect(try KDBXKeyFile.key(other) == (try [UInt8](hexString: "edfc089719c0a061bec08afad3dead4480add63a9677c13cdb5bba1779160d0f")))
    }

    @Test("a wrong password is the typed error, for AES-KDF and Argon2", arguments: ["aeskdf-aes256-gzip", "argon2d-chacha20-gzip"])
    func wrongPassword(name: String) throws {
        let (bytes, expected) = try Self.fixture(name)
        #expect(throws: KDBXError.wrongPassword) { try KDBXReader.read(bytes, password: expected.password + "x") }
        #expect(throws: KDBXError.wrongPassword) { try KDBXReader.read(bytes, password: "") }
    }

    @Test("KDBX 3.1, 2.x and KeePass 1.x's KDB are refused by name; other files are not KeePass")
    func olderVersions() throws {
        let signature: [UInt8] = [0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5]
        #expect(throws: KDBXError.unsupportedVersion("KDBX 3.1 is not supported; save it as KDBX 4 in KeePass/KeePassXC")) {
            try KDBXReader.read(signature + [0x01, 0x00, 0x03, 0x00] + [UInt8](repeating: 0, count: 64), password: "x")
        }
        #expect(throws: KDBXError.unsupportedVersion("KDBX 2.0 is not supported; save it as KDBX 4 in KeePass/KeePassXC")) {
            try KDBXReader.read(signature + [0x00, 0x00, 0x02, 0x00], password: "x")
        }
        #expect(throws: KDBXError.unsupportedVersion("a KeePass 1.x database (KDB) is not supported; open it in KeePass or KeePassXC and save it as KDBX 4")) {
            try KDBXReader.read([0x03, 0xD9, 0xA2, 0x9A, 0x65, 0xFB, 0x4B, 0xB5, 0, 0, 0, 0], password: "x")
        }
        #expect(throws: KDBXError.unsupportedVersion("KDBX 4.2 is newer than kcf reads (KDBX 4.0 and 4.1)")) {
            try KDBXReader.read(signature + [0x02, 0x00, 0x04, 0x00], password: "x")
        }
        #expect(throws: KDBXError.notKeePass) { try KDBXReader.read(Array("folder,favorite,type".utf8), password: "x") }
    }

    /// Every prefix of a database is an error: the header's fields, its SHA-256 and HMAC, and the block stream
    /// (whose last block is empty) all say where it was cut.
    @Test("every truncation of a database is an error, never a partial database")
    func truncations() throws {
        let (bytes, expected) = try Self.fixture("aeskdf-aes256-gzip")
        for length in 0..<bytes.count {
            #expect(throws: KDBXError.self, "cut at \(length)") { try KDBXReader.read(Array(bytes.prefix(length)), password: expected.password) }
        }
    }

    /// Every byte of a KDBX 4 file is covered by the header's SHA-256 and HMAC or a block's HMAC, so every flip is
    /// an error: a damaged header, a wrong password (the header's HMAC), or a damaged block.
    @Test("every single-bit flip of a database is an error naming the damage")
    func bitFlips() throws {
        let (bytes, expected) = try Self.fixture("aeskdf-aes256-gzip")
        var kinds: Set<String> = []
        for index in 0..<bytes.count {
            var flipped = bytes
            flipped[index] ^= 1 << UInt8(index % 8)
            do throws(KDBXError) {
                _ = try KDBXReader.read(flipped, password: expected.password)
                Issue.record("a flip at byte \(index) was read")
            } catch {
                switch error {
                case .damaged(let what): kinds.insert(what.contains("block") ? "block" : "header")
                case .wrongPassword: kinds.insert("password")
                default: kinds.insert("other")
                }
            }
        }
        #expect(kinds.isSuperset(of: ["block", "header", "password"]))
    }

    /// The master seed is field 4 of the header, right after the cipher (field 2, 16 bytes) and compression
    /// flags (field 3, 4 bytes): byte 12 + 21 + 9 + 5 onwards.
    @Test("a changed header byte is caught by the header's SHA-256; a changed stored HMAC reads as a wrong password")
    func headerChecks() throws {
        let (bytes, expected) = try Self.fixture("aeskdf-aes256-gzip")
        var seed = bytes
        seed[12 + 21 + 9 + 5] ^= 0x01
        #expect(throws: KDBXError.damaged("the header's SHA-256 does not match: the header is damaged")) {
            try KDBXReader.read(seed, password: expected.password)
        }
        var reader = KDBXByteReader(bytes)
        let header = try KDBXHeader(&reader)
        var mac = bytes
        mac[header.bytes.count + 32] ^= 0x80
        #expect(throws: KDBXError.wrongPassword) { try KDBXReader.read(mac, password: expected.password) }
    }

    @Test("hostile KDF parameters are refused before any work", arguments: [
        ("argon2d", "M", UInt64(64) << 30, "Argon2d with 65536 MiB of memory (kcf allows 2048 MiB): refused, to bound the memory and time a file can make kcf spend"),
        ("argon2id", "I", 1_000_000, "Argon2id with 1000000 iterations (kcf allows 1 to 10000): refused, to bound the memory and time a file can make kcf spend"),
        ("argon2d", "P", 1000, "Argon2d with 1000 lanes (kcf allows 1 to 16): refused, to bound the memory and time a file can make kcf spend"),
        ("aes", "R", UInt64.max, "AES-KDF with 18446744073709551615 rounds (kcf runs at most 100000000): refused, to bound the memory and time a file can make kcf spend"),
    ])
    func hostileParameters(kdf: String, name: String, value: UInt64, message: String) throws {
        var items: [(String, UInt8, [UInt8])] = []
        switch kdf {
        case "aes": items = [("$UUID", 0x42, KDBXKeyDerivation.aesKDFUUID), ("R", 0x05, KDBXByteReader.bytes(of: 1)), ("S", 0x42, [UInt8](repeating: 1, count: 32))]
        default:
            items = [("$UUID", 0x42, kdf == "argon2d" ? KDBXKeyDerivation.argon2dUUID : KDBXKeyDerivation.argon2idUUID),
                     ("I", 0x05, KDBXByteReader.bytes(of: 2)), ("M", 0x05, KDBXByteReader.bytes(of: 1 << 20)),
                     ("P", 0x04, Array(KDBXByteReader.bytes(of: 1).prefix(4))), ("S", 0x42, [UInt8](repeating: 1, count: 32)),
                     ("V", 0x04, [0x13, 0, 0, 0])]
        }
        items = items.map { $0.0 == name ? ($0.0, $0.1, $0.1 == 0x04 ? Array(KDBXByteReader.bytes(of: value).prefix(4)) : KDBXByteReader.bytes(of: value)) : $0 }
        var dictionary: [UInt8] = [0x00, 0x01]
        for (key, type, data) in items {
            dictionary += [type] + Array(KDBXByteReader.bytes(of: UInt64(key.utf8.count)).prefix(4)) + Array(key.utf8)
            dictionary += Array(KDBXByteReader.bytes(of: UInt64(data.count)).prefix(4)) + data
        }
        dictionary.append(0)
        let parameters = try KDBXVariantDictionary(dictionary)
        let started = Date()
        #expect(throws: KDBXError.limitExceeded(String(message.prefix(while: { $0 != ":" })))) {
            try KDBXKeyDerivation.transformedKey([UInt8](repeating: 0, count: 32), parameters: parameters)
        }
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(KDBXError.limitExceeded(String(message.prefix(while: { $0 != ":" }))).description == message)
    }
}
