import Foundation
import Testing
@testable import KeychainFile
@_spi(KeychainFileInternals) import KeychainCrypto

/// Version 3's key slots against the independent Python implementation (Scripts/reference/slots_v3.py, written
/// from the layout with `cryptography`'s X25519, HKDF, HMAC and AES-GCM): each opens the other's slots, grants
/// and all, and agrees on the attestation.
@Suite("Format v3: key slots agree with the Python reference", .enabled(if: SlotsV3Script.pythonCryptography))
struct KeySlotV3ReferenceTests {
    static func python(_ arguments: [String]) throws -> (status: Int32, output: String) { try SlotsV3Script.python(arguments) }

    static let script = RepositoryFiles.url("Scripts/reference/slots_v3.py").path
    static let fileID = KeySlotV3Tests.fileID

    static func reference(_ arguments: [String]) throws -> [String: Any] {
        let result = try python([script] + arguments)
        return try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any], "\(arguments[0]): \(result.output)")
    }

    static func hex(_ bytes: [UInt8]) -> String { HexText.lowercase(bytes) }
    static func unhex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    static func json(_ keys: KeySetV3) -> String {
        let groups = keys.groups.map { "{\"keyID\": \($0.keyID), \"name\": \"\($0.name)\", \"key\": \"\(hex(KeySlotV3Tests.bytes($0.key)!))\"}" }
        let root = keys.root.map { "\"\(hex(KeySlotV3Tests.bytes($0)!))\"" } ?? "null"
        return "{\"logKey\": \"\(hex(KeySlotV3Tests.bytes(keys.logKey)!))\", \"root\": \(root), \"rho\": \"\(hex(keys.rootAgreementPublicKey))\", \"groups\": [\(groups.joined(separator: ", "))]}"
    }

    static func matches(_ object: Any?, _ keys: KeySetV3) -> Bool {
        guard let object = object as? [String: Any] else { return false }
        return object["logKey"] as? String == hex(KeySlotV3Tests.bytes(keys.logKey)!)
            && object["rho"] as? String == hex(keys.rootAgreementPublicKey)
            && (object["root"] as? String) == keys.root.map { hex(KeySlotV3Tests.bytes($0)!) }
            && (object["groups"] as? [[String: Any]] ?? []).map { "\($0["keyID"]!)/\($0["name"]!)/\($0["key"]!)" }
                == keys.groups.map { "\($0.keyID)/\($0.name)/\(hex(KeySlotV3Tests.bytes($0.key)!))" }
    }

    @Test("Python opens Swift's slots, through two grants, and tells a wrong credential", arguments: ["password", "key"])
    func pythonOpensSwift(kind: String) throws {
        let rawKey = [UInt8](repeating: 0x5A, count: 32)
        let credential: Credential = kind == "password" ? .password("Grüße, slot") : .key(SymmetricKey(data: rawKey))
        let argument = kind == "password" ? ["--password", "Grüße, slot"] : ["--key", Self.hex(rawKey)]
        let (slot, roots, keys) = try KeySlotV3Tests.slotWithTwoGrants(credential, kdf: kind == "password" ? .pbkdf2(iterations: 3) : .hkdf)
        let opened = try Self.reference(["open", Self.hex(slot.encoded), Self.hex(Self.fileID)] + argument)
        #expect(opened["grantsOpened"] as? Int == 2)
        #expect(Self.matches(opened["keys"], keys[2]), "\(opened)")
        let wrong = kind == "password" ? ["--password", "Grüsse, slot"] : ["--key", Self.hex([UInt8](repeating: 0x5B, count: 32))]
        #expect(try Self.reference(["open", Self.hex(slot.encoded), Self.hex(Self.fileID)] + wrong)["result"] as? String == "wrongCredentials")
        #expect(try Self.reference(["attested", Self.hex(slot.encoded), Self.hex(Self.fileID), "--root", Self.hex(KeySlotV3Tests.bytes(roots[2])!)])["attested"] as? Bool == true)
        #expect(try Self.reference(["attested", Self.hex(slot.encoded), Self.hex(Self.fileID), "--root", Self.hex(KeySlotV3Tests.bytes(roots[1])!)])["attested"] as? Bool == false)
    }

    @Test("Argon2id slots: each side opens the other's (RFC 9106 Argon2id through `cryptography` on the Python side)")
    func argon2id() throws {
        var generator = SystemRandomNumberGenerator()
        let root = SymmetricKey(size: .bits256)
        let keys = try KeySlotV3Tests.fullKeys(root: root)
        let swiftSlot = try KeySlotV3.make(for: .password("Argon slot"), kdf: .argon2id(memoryKiB: 64, passes: 2, lanes: 2), keys: keys,
                                           fileID: Self.fileID, attestingWith: root, using: &generator)
        let opened = try Self.reference(["open", Self.hex(swiftSlot.encoded), Self.hex(Self.fileID), "--password", "Argon slot"])
        #expect(Self.matches(opened["keys"], keys), "\(opened)")
        let made = try #require(try Self.reference([
            "make", Self.hex(Self.fileID), "--password", "Argon slot", "--argon2id", "32,3,1", "--keys", Self.json(keys),
            "--root", Self.hex(KeySlotV3Tests.bytes(root)!), "--seed", "7"])["slot"] as? String)
        let pythonSlot = try KeySlotV3.parse(Self.unhex(made), fileOffset: 0)
        #expect(pythonSlot.kdf == .argon2id(memoryKiB: 32, passes: 3, lanes: 1))
        #expect(KeySlotV3Tests.same(try #require(try pythonSlot.open(with: .password("Argon slot"), fileID: Self.fileID, slotOffset: 0)).keys, keys))
        #expect(try pythonSlot.open(with: .password("argon slot"), fileID: Self.fileID, slotOffset: 0) == nil)
    }

    @Test("Swift opens Python's slots and grants, full and scoped; a grant Python forges without the root is refused")
    func swiftOpensPython() throws {
        let roots = (0..<3).map { _ in SymmetricKey(size: .bits256) }
        let keys = try roots.map { try KeySlotV3Tests.fullKeys(root: $0) }
        var made = try #require(try Self.reference([
            "make", Self.hex(Self.fileID), "--password", "pw", "--iterations", "2", "--keys", Self.json(keys[0]),
            "--root", Self.hex(KeySlotV3Tests.bytes(roots[0])!), "--seed", "1"])["slot"] as? String)
        for step in 1...2 {
            made = try #require(try Self.reference([
                "grant", made, Self.hex(Self.fileID), "--keys", Self.json(keys[step]),
                "--previous-root", Self.hex(KeySlotV3Tests.bytes(roots[step - 1])!), "--seed", "\(step + 1)"])["slot"] as? String)
        }
        let slot = try KeySlotV3.parse(Self.unhex(made), fileOffset: 0)
        #expect(slot.encoded == Self.unhex(made), "Swift writes back Python's bytes unchanged")
        #expect(try slot.isAttested(by: roots[2], fileID: Self.fileID))
        let opened = try #require(try slot.open(with: .password("pw"), fileID: Self.fileID, slotOffset: 0))
        #expect(opened.grantsOpened == 2 && KeySlotV3Tests.same(opened.keys, keys[2]))

        let forged = try #require(try Self.reference([
            "grant", made, Self.hex(Self.fileID), "--keys", Self.json(keys[0]),
            "--previous-root", Self.hex(KeySlotV3Tests.bytes(roots[0])!), "--seed", "9"])["slot"] as? String)
        #expect(throws: KeySlotV3Tests.corrupted) {
            _ = try KeySlotV3.parse(Self.unhex(forged), fileOffset: 0).open(with: .password("pw"), fileID: Self.fileID, slotOffset: 0)
        }

        let rho = try SlotKeysV3.rootAgreementPublicKey(root: roots[0], fileID: Self.fileID)
        let scoped = KeySetV3(logKey: SymmetricKey(size: .bits256), rootAgreementPublicKey: rho, root: nil, groups: [
            KeySetV3.Group(keyID: 1, name: "", key: SymmetricKey(size: .bits256)),
            KeySetV3.Group(keyID: 4, name: "Gruppe Ä", key: SymmetricKey(size: .bits256)),
        ])
        let scopedHex = try #require(try Self.reference([
            "make", Self.hex(Self.fileID), "--password", "app", "--iterations", "1", "--keys", Self.json(scoped),
            "--root", Self.hex(KeySlotV3Tests.bytes(roots[0])!), "--seed", "4"])["slot"] as? String)
        let scopedSlot = try KeySlotV3.parse(Self.unhex(scopedHex), fileOffset: 0)
        #expect(scopedSlot.scope == .groups([1, 4]))
        #expect(KeySlotV3Tests.same(try #require(try scopedSlot.open(with: .password("app"), fileID: Self.fileID, slotOffset: 0)).keys, scoped))

        // And Python opens Swift's scoped slot, with a grant.
        var generator = SystemRandomNumberGenerator()
        let swiftScoped = try KeySlotV3.make(for: .password("app"), kdf: .pbkdf2(iterations: 1), keys: scoped, fileID: Self.fileID,
                                             attestingWith: roots[0], using: &generator)
        let rho1 = try SlotKeysV3.rootAgreementPublicKey(root: roots[1], fileID: Self.fileID)
        let nextScoped = KeySetV3(logKey: SymmetricKey(size: .bits256), rootAgreementPublicKey: rho1, root: nil, groups: [
            KeySetV3.Group(keyID: 1, name: "", key: SymmetricKey(size: .bits256)),
            KeySetV3.Group(keyID: 4, name: "Gruppe Ä", key: SymmetricKey(size: .bits256)),
        ])
        let grantedScoped = try swiftScoped.granting(nextScoped, previousRoot: roots[0], fileID: Self.fileID, using: &generator)
        let pythonOpened = try Self.reference(["open", Self.hex(grantedScoped.encoded), Self.hex(Self.fileID), "--password", "app"])
        #expect(pythonOpened["grantsOpened"] as? Int == 1 && Self.matches(pythonOpened["keys"], nextScoped), "\(pythonOpened)")
    }
}

/// python3 and the reference script, for ``KeySlotV3ReferenceTests``.
enum SlotsV3Script {
    static let pythonCryptography: Bool = {
        (try? python(["-c", "from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey"]))?.status == 0
    }()

    /// Runs python3 with `arguments`; its status and standard output.
    static func python(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
