import Foundation
import KeychainFile
import Testing

/// `show-keychain-info`: the expectations are read from the file's bytes as SPEC.md lays them out — version at 8 and
/// file id at 16 in both versions; the slot count at 72 and slots from 76 in version 1 (§4–5), at 108 and from 112
/// in version 2 (§20.1, §21.1); in both a slot is type, KDF or reserved byte, length, id, iterations — not from kcf.
@Suite("kcf show-keychain-info: format version, file id, items by class, key slots and sizes")
struct KeychainInfoTests {
    /// One key slot as the header holds it.
    struct Slot: Equatable {
        let kind: String
        let id: String
        let iterations: Int?
    }

    /// The format version, file id and key slots of the file's header (SPEC.md §4, §5; §20.1, §21.1).
    static func header(_ bytes: [UInt8]) -> (version: Int, fileID: String, slots: [Slot]) {
        func hex(_ slice: ArraySlice<UInt8>) -> String { slice.map { String(format: "%02x", $0) }.joined() }
        func number(_ slice: ArraySlice<UInt8>) -> Int { slice.reduce(0) { $0 << 8 | Int($1) } }
        let version = number(bytes[8..<10])
        let (countOffset, slotsStart) = version == 1 ? (72, 76) : (108, 112)
        var slots: [Slot] = []
        var offset = slotsStart
        for _ in 0..<Int(bytes[countOffset]) {
            let length = number(bytes[(offset + 2)..<(offset + 4)])
            let password = bytes[offset] == 1
            slots.append(Slot(kind: password ? "password" : "rawKey", id: hex(bytes[(offset + 4)..<(offset + 20)]),
                              iterations: password ? number(bytes[(offset + 20)..<(offset + 24)]) : nil))
            offset += length
        }
        return (version, hex(bytes[16..<32]), slots)
    }

    /// A keychain of `formatVersion` with two password slots (the second of 2,000 iterations, made with the file:
    /// adding it later would rewrite a version 1 file as version 2), two generic passwords (one deleted after) and a
    /// certificate.
    static func sandbox(formatVersion: Int) throws -> KcfSandbox {
        let sandbox = try KcfSandbox()
        let options = Keychain.CreationOptions(
            passwordIterations: .insecureForTesting(1_000), additionalCredentials: [.password("a second password")],
            formatVersion: formatVersion)
        _ = try Keychain.create(at: sandbox.keychain, credential: .password(KcfSandbox.password), options: options)
        try sandbox.addGeneric(account: "a", service: "one", secret: "1")
        try sandbox.addGeneric(account: "a", service: "two", secret: "2")
        #expect(try sandbox.unlocked(["delete-generic-password", "-s", "two"]).status == 0)
        #expect(try sandbox.unlocked(["import", KcfSandbox.fixture("certificates/rsa2048-v1.der")]).status == 0)
        return sandbox
    }

    @Test("the text names the format version, file id, epoch, items by class, each key slot and the sizes",
          arguments: [1, 2])
    func text(formatVersion: Int) throws {
        let sandbox = try Self.sandbox(formatVersion: formatVersion)
        let bytes = try sandbox.keychainBytes()
        let header = Self.header(bytes)
        try #require(header.slots.count == 2)
        let result = try sandbox.unlocked(["show-keychain-info"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("keychain: \"\(sandbox.keychain)\""))
        #expect(lines.contains("format version: \(header.version)"))
        #expect(header.version == formatVersion)
        #expect(lines.contains("file id: \(header.fileID)"))
        #expect(lines.contains("epoch: 1"))
        #expect(lines.contains("items: 2 (generic passwords 1, internet passwords 0, certificates 1, keys 0; identities 0)"))
        #expect(lines.contains("key slots: 2"))
        #expect(header.slots.map(\.iterations) == [1_000, 1_000])
        #expect(lines.contains("    1) password, PBKDF2-HMAC-SHA256, 1000 iterations; id \(header.slots[0].id)"))
        #expect(lines.contains("    2) password, PBKDF2-HMAC-SHA256, 1000 iterations; id \(header.slots[1].id)"))
        #expect(lines.contains { $0.hasPrefix("file: \(bytes.count) bytes, ") }, "\(lines)")
        #expect(lines.last == "torn tail: none")
        // The alias, and a keychain given as the last argument.
        let alias = try sandbox.unlocked(["statistics", sandbox.keychain])
        #expect(alias.stdout == result.stdout)
    }

    @Test("--json: the same facts, parsed; live plus dead bytes are the file's size; a deletion leaves dead bytes",
          arguments: [1, 2])
    func json(formatVersion: Int) throws {
        let sandbox = try Self.sandbox(formatVersion: formatVersion)
        #expect(try sandbox.unlocked(["delete-generic-password", "-s", "one"]).status == 0)
        let bytes = try sandbox.keychainBytes()
        let header = Self.header(bytes)
        let result = try sandbox.unlocked(["show-keychain-info", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let info = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(info["keychain"] as? String == sandbox.keychain)
        #expect(header.version == formatVersion)
        #expect(info["formatVersion"] as? Int == header.version)
        #expect(info["fileID"] as? String == header.fileID)
        #expect(info["epoch"] as? Int == 1)
        let items = try #require(info["items"] as? [String: Any])
        #expect(items["genericPassword"] as? Int == 0 && items["certificate"] as? Int == 1 && items["total"] as? Int == 1)
        let slots = try #require(info["keySlots"] as? [[String: Any]])
        let parsed = slots.map { Slot(kind: $0["kind"] as? String ?? "", id: $0["id"] as? String ?? "", iterations: $0["iterations"] as? Int) }
        #expect(parsed == header.slots)
        #expect(slots.allSatisfy { $0["kdf"] as? String == "PBKDF2-HMAC-SHA256" })
        let file = try #require(info["file"] as? [String: Any])
        let size = try #require(file["size"] as? Int), live = try #require(file["liveBytes"] as? Int), dead = try #require(file["deadBytes"] as? Int)
        #expect(size == bytes.count)
        #expect(live + dead == size)
        #expect(dead > 0, "the deleted item's put and its deletion are dead")
        #expect(info["tornTail"] is NSNull)
    }

    @Test("a wrong password exits 51, a missing keychain 220, and output to a closed pipe 4")
    func failures() throws {
        let sandbox = try Self.sandbox(formatVersion: Keychain.formatVersion)
        #expect(try sandbox.run(["show-keychain-info"], stdin: "wrong\n").status == 51)
        let missing = try sandbox.run(["show-keychain-info", "-k", sandbox.file("none.kcf")])
        #expect(missing.status == 220)
        #expect(missing.stderr.contains("no keychain at"))
        for arguments in [["show-keychain-info"], ["show-keychain-info", "--json"]] {
            let closed = try sandbox.run(arguments, stdinBytes: Array((KcfSandbox.password + "\n").utf8), stdout: .brokenPipe)
            #expect(closed.status == 4, "\(arguments): \(closed.stderr)")
        }
    }
}
