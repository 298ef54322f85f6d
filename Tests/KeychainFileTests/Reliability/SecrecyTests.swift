import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

/// No attribute value, secret or credential appears in a keychain file's bytes — searched as UTF-8, UTF-16
/// (both byte orders) and raw bytes — and every file the library creates has mode 0600 (SPEC.md §10, §13,
/// §16).
///
/// Needles shorter than 4 bytes are not searched: a 4-byte needle matches random ciphertext at a given
/// offset with probability 2⁻³², so over a file of N bytes by chance with probability about N / 2³² (2·10⁻⁶
/// for an 8 KiB file). For files over 64 KiB (the thousand-items fixture) the bound is 6 bytes, so that the
/// thousands of needles of that fixture keep the expected number of chance matches below 10⁻⁵. Integers
/// and dates are searched as their 8-byte big-endian encodings only when at least 4 of those bytes are not
/// zero: small numbers (an accessibility of 1) are also the file's epoch and sequence numbers in clear.
///
/// Key material: ``SymmetricKey`` keeps its bytes in storage that `explicit_bzero`s them when the last copy
/// is released, and key slots wipe the unwrapped master key's temporary array. Checking that freed memory
/// was wiped means reading memory after it is deallocated, which is undefined behaviour in Swift; the wiping
/// primitive itself is tested in KeychainCryptoTests (`secureZero overwrites every byte`). Not covered:
/// passwords are Swift `String`s (and their normalised UTF-8 copy in `KeySlot.keyEncryptionKey`), which
/// Swift gives no way to wipe, and decrypted secrets returned to the caller.
@Suite("Reliability: secrecy")
struct SecrecyTests {
    /// The byte strings that must not appear for a value, with how each was encoded.
    static func needles(for value: AttributeValue) -> [(String, [UInt8])] {
        switch value {
        case .string(let text): return needles(forText: text)
        case .bytes(let bytes): return [("raw", bytes)]
        case .integer, .date:
            var encoded: [UInt8] = []
            let number: Int64 = value.millisecondsSince1970 ?? {
                if case .integer(let number) = value { return number }
                return 0
            }()
            for shift in stride(from: 56, through: 0, by: -8) { encoded.append(UInt8(truncatingIfNeeded: number >> Int64(shift))) }
            return encoded.filter { $0 != 0 }.count >= 4 ? [("i64", encoded)] : []
        case .boolean: return []
        }
    }

    static func needles(forText text: String) -> [(String, [UInt8])] {
        [("UTF-8", Array(text.utf8)),
         ("UTF-16LE", text.utf16.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8($0 >> 8)] }),
         ("UTF-16BE", text.utf16.flatMap { [UInt8($0 >> 8), UInt8(truncatingIfNeeded: $0)] })]
    }

    /// Searches `haystack` for every needle of at least the minimum length; returns what was found. The
    /// haystack's positions are indexed by their first `minimum` bytes, so that thousands of needles cost a
    /// lookup each.
    static func scan(_ haystack: [UInt8], for needles: [(String, [UInt8])], what: String) -> (searched: Int, found: [String]) {
        let minimum = haystack.count > 64 * 1024 ? 6 : 4
        func key<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> UInt64 { bytes.prefix(minimum).reduce(0) { $0 << 8 | UInt64($1) } }
        var positions: [UInt64: [Int]] = [:]
        if haystack.count >= minimum {
            for start in 0...(haystack.count - minimum) {
                positions[key(haystack[start..<(start + minimum)]), default: []].append(start)
            }
        }
        var searched = 0
        var found: [String] = []
        for (encoding, needle) in needles where needle.count >= minimum {
            searched += 1
            let hit = positions[key(needle)]?.contains { start in
                start + needle.count <= haystack.count && haystack[start..<(start + needle.count)].elementsEqual(needle)
            } ?? false
            if hit { found.append("\(what) (\(encoding), \(needle.count) bytes)") }
        }
        return (searched, found)
    }

    /// Every needle of a snapshot's items: attribute values and secrets.
    static func needles(of snapshot: KeychainSnapshot) -> [(String, [UInt8])] {
        var all: [(String, [UInt8])] = []
        for item in snapshot.items.values {
            for (attribute, value) in item.attributes {
                all += needles(for: value).map { ("\(attribute.name) \($0.0)", $0.1) }
            }
            all.append(("secret raw", item.secret))
            if let text = String(bytes: item.secret, encoding: .utf8) {
                all += needles(forText: text).dropFirst().map { ("secret \($0.0)", $0.1) }
            }
        }
        return all
    }

    @Test("No attribute value or secret of any fixture appears in its file")
    func fixtures() throws {
        var searched = 0
        var files = 0
        for name in FixtureManifest.names {
            let fixture = try FixtureManifest(name)
            guard let expected = fixture.expected else { continue }
            var needles = Self.needles(of: expected)
            if case .password(let password) = fixture.credential { needles += Self.needles(forText: password).map { ("password \($0.0)", $0.1) } }
            let result = Self.scan(fixture.bytes, for: needles, what: name)
            searched += result.searched
            files += 1
            for found in result.found { Issue.record("found in \(name): \(found)") }
        }
        #expect(searched > 10_000)
        print("secrecy: \(files) fixtures that open, \(searched) needles searched, nothing found")
    }

    /// A keychain with items of every class holding every attribute, changed in every way; its file, after
    /// each step, must hold none of the values, secrets or credentials, and every file it makes is 0600.
    @Test("No attribute value, secret or credential appears in files the library writes, which are all mode 0600")
    func writtenFiles() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("secret.kcf")
        let password = "Tr0ub4dor & correct horse ✓"
        let applicationKey = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 5) }
        let keychain = try Keychain.create(
            at: path, credential: .password(password),
            options: .init(passwordIterations: .insecureForTesting(1_000), additionalCredentials: [.key(SymmetricKey(data: applicationKey))],
                           autoCompaction: .disabled))
        var everything: [(String, [UInt8])] = Self.needles(forText: password).map { ("password \($0.0)", $0.1) }
            + [("application key", applicationKey)]
        var searched = 0
        var modesChecked = 0
        func check(_ step: String) throws {
            for file in [path, Keychain.lockFilePath(for: path)] {
                let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
                #expect(mode == 0o600, "\(step): \(file) has mode \(String(mode, radix: 8))")
                modesChecked += 1
            }
            everything += Self.needles(of: try KeychainSnapshot(keychain))
            let result = Self.scan(try fileBytes(path), for: everything, what: step)
            searched += result.searched
            for found in result.found { Issue.record("found after \(step): \(found)") }
        }
        try check("creation")
        for itemClass in ItemClass.allCases {
            for variant in 0..<2 {
                try keychain.add(try fullAttributes(of: itemClass, variant: variant),
                                 secret: Array("secret of \(itemClass) \(variant): 🔑 \(UUID())".utf8))
            }
        }
        try check("adding items of every class")
        try keychain.update(Query(.genericPassword, synchronizable: .any, limit: .all), setting: [.label: .string("a new label ∆")],
                            secret: Array("updated secret ⚷".utf8))
        try check("updating")
        try keychain.delete(Query(.key, synchronizable: .any))
        try check("deleting")
        try keychain.compact()
        try check("compacting")
        // The slot-only change, as the application key's slot stays (a rotating change is refused beside it).
        try keychain.changePasswordKeepingKeys(from: password, to: "another password entirely", keyDerivation: .pbkdf2(.insecureForTesting(1_000)))
        everything += Self.needles(forText: "another password entirely")
        try check("changing the password")
        try keychain.rotateMasterKey(credentials: [.password("rotated password ⚙︎")], iterations: .insecureForTesting(1_000))
        everything += Self.needles(forText: "rotated password ⚙︎")
        try check("rotating the master key")

        // A salvaged copy is a new file too.
        let salvaged = directory.file("salvaged.kcf")
        _ = try Keychain.salvage(from: path, credential: .password("rotated password ⚙︎"), to: salvaged)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: salvaged)[.posixPermissions] as? Int)
        #expect(mode == 0o600, "salvaged file has mode \(String(mode, radix: 8))")
        modesChecked += 1
        let result = Self.scan(try fileBytes(salvaged), for: everything, what: "salvage")
        searched += result.searched
        for found in result.found { Issue.record("found in the salvaged file: \(found)") }
        #expect(searched > 1_000)
        print("secrecy: written files: \(searched) needle searches over 8 file versions, nothing found; \(modesChecked) file modes checked, all 0600")
    }

    @Test("The scan finds what it looks for")
    func scanWorks() throws {
        let bytes = [UInt8](repeating: 0xEE, count: 100) + Array("label value".utf8) + [0x00]
            + "ünï".utf16.flatMap { [UInt8($0 >> 8), UInt8(truncatingIfNeeded: $0)] }
        #expect(Self.scan(bytes, for: Self.needles(for: .string("label value")), what: "x").found.count == 1)
        #expect(Self.scan(bytes, for: Self.needles(for: .string("ünï")), what: "x").found == ["x (UTF-16BE, 6 bytes)"])
        #expect(Self.scan(bytes, for: Self.needles(for: .string("abc")), what: "x").searched == 2, "3-byte UTF-8 is below the minimum")
        #expect(Self.scan(bytes, for: Self.needles(for: .bytes([0xEE, 0xEE, 0xEE, 0xEE])), what: "x").found.count == 1)
    }
}
