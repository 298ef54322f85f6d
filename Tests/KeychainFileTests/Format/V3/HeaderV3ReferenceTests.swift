import Foundation
import Testing
@testable import KeychainFile
@_spi(KeychainFileInternals) import KeychainCrypto

/// Version 3's header against the independent Python implementation (Scripts/reference/header_v3.py, written from
/// Docs/FormatVersion3.md §2.4 and §2.9 with `cryptography` and the version 2 reference's page parity): each opens
/// the other's prefixes, full and scoped, whole and with a run lost, and both refuse a header under another log key.
@Suite("Format v3: the header agrees with the Python reference", .enabled(if: SlotsV3Script.pythonCryptography))
struct HeaderV3ReferenceTests {
    static let script = RepositoryFiles.url("Scripts/reference/header_v3.py").path
    static func hex(_ bytes: [UInt8]?) -> String? { bytes.map { HexText.lowercase($0) } }
    static func hex(_ key: SymmetricKey?) -> String? { hex(HeaderV3Tests.bytes(key)) }

    /// Python's reading of a prefix file: its JSON, or `nil` when it exits 6 (corrupted).
    static func pythonOpen(_ path: String, _ arguments: [String]) throws -> [String: Any]? {
        let result = try SlotsV3Script.python([script, "open", path] + arguments)
        if result.status == 6 { return nil }
        #expect(result.status == 0, "header_v3.py open: \(result.output)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
    }

    static func groups(_ object: Any?) -> [String] {
        ((object as? [[String: Any]]) ?? []).map { "\($0["keyID"] ?? "")/\($0["name"] ?? "")/\($0["key"] ?? "")" }
    }

    static func groups(_ groups: [KeySetV3.Group]) -> [String] { groups.map { "\($0.keyID)/\($0.name)/\(hex($0.key)!)" } }

    /// Whether Python's reading of `file` is `opened`, field by field.
    static func agree(_ python: [String: Any], _ opened: OpenedHeaderV3) -> Bool {
        python["fileID"] as? String == hex(opened.header.fileID) && python["epoch"] as? Int == Int(opened.header.epoch)
            && python["pageCount"] as? Int == opened.pageCount && python["slotIndex"] as? Int == opened.slotIndex
            && python["logKey"] as? String == hex(opened.slot.keys.logKey) && (python["root"] as? String) == hex(opened.slot.keys.root)
            && python["c0"] as? String == hex(opened.initialChain)
            && python["chainKey"] as? String == hex(opened.logKeys.chain) && python["headsKey"] as? String == hex(opened.logKeys.heads) && python["header"] as? String == hex(opened.headerBytes)
            && groups(python["groups"]) == groups(opened.groups)
            && (python["runs"] as? [String]) == opened.runs.map { run -> String in
                switch run.copy {
                case .intact: "intact"
                case .repaired: "repaired"
                case .unusable: "unusable"
                }
            }
    }

    @Test("Python opens Swift's headers, of one page and of several, full and scoped, whole and with run A lost")
    func pythonReadsSwift() throws {
        let directory = TemporaryDirectory()
        var generator = SystemRandomNumberGenerator()
        let small = try NewHeaderV3(credential: HeaderV3Tests.password, kdf: HeaderV3Tests.cheap, using: &generator)
        let scoped = try HeaderV3Tests.scopedSlot(.password("scoped"), groups: small.keyTable.groups, in: small)
        let smallBytes = try HeaderV3Tests.rewritten(small.header, slots: small.header.slots + [scoped], logKey: small.logKey)
        let large = try HeaderV3Tests.largeHeader(groups: 120)
        var checked = 0
        for bytes in [smallBytes, large.bytes] {
            let file = HeaderV3Tests.prefix(bytes)
            let count = HeaderRunV3.pageCount(forLength: bytes.count)
            var lostA = file
            lostA.replaceSubrange(0..<4_096, with: [UInt8](repeating: 0, count: 4_096))
            var flipped = file
            for index in stride(from: 7, to: min(bytes.count, 3_000), by: 211) { flipped[index] ^= 0x40 }
            for (name, variant) in [("whole", file), ("lostA", lostA), ("flipped", flipped)] {
                let path = directory.file("\(count)-\(name).prefix")
                try Data(variant).write(to: URL(fileURLWithPath: path))
                for (credential, argument) in [(HeaderV3Tests.password, "header password"), (Credential.password("scoped"), "scoped")] {
                    let opened = try HeaderV3Tests.open(variant, credential)
                    let python = try #require(try Self.pythonOpen(path, ["--password", argument]), "\(name), \(argument)")
                    #expect(Self.agree(python, opened), "\(count) pages, \(name), \(argument): \(python)")
                    checked += 1
                }
                let wrong = try Self.pythonOpen(path, ["--password", "wrong"])
                #expect(wrong?["result"] as? String == "wrongCredentials")
            }
        }
        #expect(checked == 12)
        // A header MAC'd under another log key: both refuse it as corrupted.
        let foreign = try HeaderV3Tests.rewritten(small.header, logKey: SymmetricKey(size: .bits256))
        let path = directory.file("foreign.prefix")
        try Data(HeaderV3Tests.prefix(foreign)).write(to: URL(fileURLWithPath: path))
        #expect(try Self.pythonOpen(path, ["--password", "header password"]) == nil)
        #expect(throws: HeaderV3Tests.corrupted) { _ = try HeaderV3Tests.open(HeaderV3Tests.prefix(foreign)) }
    }

    @Test("Python opens a header Swift rotated, with each credential: the new password, a raw key and a scoped one through their grants")
    func pythonReadsRotation() throws {
        let directory = TemporaryDirectory()
        var generator = SystemRandomNumberGenerator()
        let (_, bytes) = try HeaderRotationV3Tests.threeSlots()
        let opened = try HeaderV3Tests.open(HeaderV3Tests.prefix(bytes))
        let rotated = try RotatedKeysV3(rotating: opened, to: .password("rotated"), kdf: HeaderV3Tests.cheap, using: &generator)
        let file = HeaderV3Tests.prefix(try HeaderRotationV3Tests.nextEpoch(opened.header, rotated))
        let path = directory.file("rotated.prefix")
        try Data(file).write(to: URL(fileURLWithPath: path))
        let credentials: [(Credential, [String])] = [
            (.password("rotated"), ["--password", "rotated"]),
            (.key(HeaderRotationV3Tests.rawKey), ["--key", Self.hex(HeaderRotationV3Tests.rawKey)!]),
            (HeaderRotationV3Tests.scoped, ["--password", "scoped"]),
        ]
        for (credential, arguments) in credentials {
            let swift = try HeaderV3Tests.open(file, credential)
            let python = try #require(try Self.pythonOpen(path, arguments))
            #expect(Self.agree(python, swift), "\(arguments): \(python)")
        }
        let old = try Self.pythonOpen(path, ["--password", "header password"])
        #expect(old?["result"] as? String == "wrongCredentials")
    }

    @Test("Both refuse an older copy in place of a newer one, a copy without this credential's slot, and another keychain's run")
    func bothRefuseRollbacks() throws {
        let directory = TemporaryDirectory()
        var generator = SystemRandomNumberGenerator()
        let new = try NewHeaderV3(credential: HeaderV3Tests.password, kdf: HeaderV3Tests.cheap, using: &generator)
        let prefix = HeaderV3Tests.prefix(new.bytes)
        var later = try HeaderV3Tests.atEpoch(new.header, 2, logKey: new.logKey)
        later[FileHeaderV3.fixedLength + 20] ^= 1
        let raw = try KeySlotV3.make(
            for: .key(SymmetricKey(size: .bits256)), kdf: .hkdf, keys: try KeySetV3.full(logKey: new.logKey, root: new.root, fileID: new.header.fileID),
            fileID: new.header.fileID, attestingWith: new.root, using: &generator)
        let foreign = try NewHeaderV3(credential: HeaderV3Tests.password, kdf: HeaderV3Tests.cheap, using: &generator)
        let variants = [
            ("altered", HeaderV3Tests.withRunB(prefix, HeaderV3Tests.rechecksummed(later))),
            ("withoutSlot", HeaderV3Tests.withRunB(prefix, try HeaderV3Tests.atEpoch(new.header, 2, slots: [raw], logKey: new.logKey))),
            ("foreign", HeaderV3Tests.withRunB(prefix, try HeaderV3Tests.atEpoch(foreign.header, 5, logKey: foreign.logKey))),
        ]
        for (name, file) in variants {
            let path = directory.file("\(name).prefix")
            try Data(file).write(to: URL(fileURLWithPath: path))
            #expect(try Self.pythonOpen(path, ["--password", "header password"]) == nil, "\(name)")
            #expect(throws: HeaderV3Tests.corrupted, "\(name)") { _ = try HeaderV3Tests.open(file) }
        }
    }

    @Test("Swift opens Python's headers, and finds the keys Python made them with", arguments: [0, 150])
    func swiftReadsPython(extraGroups: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("python.prefix")
        let made = try SlotsV3Script.python([
            Self.script, "make", path, "--password", "pythön", "--iterations", "3", "--seed", "\(extraGroups + 11)",
            "--groups", "\(extraGroups)", "--scoped-password", "scoped",
        ])
        #expect(made.status == 0)
        let keys = try #require(try JSONSerialization.jsonObject(with: Data(made.output.utf8)) as? [String: Any])
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let opened = try HeaderV3Tests.open(file, .password("pythön"))
        #expect(Self.hex(opened.header.fileID) == keys["fileID"] as? String)
        #expect(Self.hex(opened.slot.keys.logKey) == keys["logKey"] as? String && Self.hex(opened.slot.keys.root) == keys["root"] as? String)
        #expect(Self.groups(opened.groups) == Self.groups(keys["groups"]))
        #expect(opened.pageCount == keys["pageCount"] as? Int && file.count == HeaderRunV3.logStart(pageCount: opened.pageCount))
        #expect(opened.runs.allSatisfy { if case .intact = $0.copy { true } else { false } })
        if extraGroups >= 2 {
            let scoped = try HeaderV3Tests.open(file, .password("scoped"))
            #expect(scoped.keyTable == nil && Self.groups(scoped.groups) == Array(Self.groups(keys["groups"]).dropFirst().prefix(2)))
        }
        #expect(throws: KeychainError.wrongCredentials) { _ = try HeaderV3Tests.open(file, .password("pythön?")) }
    }
}
