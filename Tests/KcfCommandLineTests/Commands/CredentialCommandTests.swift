import Foundation
import KeychainFile
import Testing

/// `kcf add-credential`, `list-credentials` and `remove-credential`: the key slots of a keychain, checked against
/// the library's own reading of the header (`Keychain.keySlots()`), not against kcf's output alone.
@Suite("kcf: add-credential, list-credentials, remove-credential")
struct CredentialCommandTests {
    static let second = "a second password, for the recovery envelope"

    /// The ids of the key slots, as the library reads them with `password`.
    static func slotIDs(_ sandbox: KcfSandbox, password: String = KcfSandbox.password) throws -> [String] {
        let keychain = try Keychain.open(at: sandbox.keychain, credential: .password(password))
        return try keychain.keySlots().map { $0.id.map { String(format: "%02x", $0) }.joined() }
    }

    @Test("add-credential adds a slot the new password opens; both passwords open the keychain and its items")
    func add() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "mail", secret: "kept")
        let before = try Self.slotIDs(sandbox)
        let added = try sandbox.unlocked(["add-credential", "--insecure-iterations", "1000"], then: [Self.second])
        #expect(added.status == 0, "\(added.stderr)")
        let after = try Self.slotIDs(sandbox, password: Self.second)
        #expect(after.count == 2 && after.first == before.first, "\(before) → \(after)")
        let new = try #require(after.last)
        #expect(added.stdout == "key slot added: \(new)  password, PBKDF2-HMAC-SHA256, 1000 iterations\n")
        for password in [KcfSandbox.password, Self.second] {
            let found = try sandbox.run(["find-generic-password", "-s", "mail", "-w"], extra: ["KCF_PASSWORD": password])
            #expect(found.stdout == "kept\n", "\(found.stderr)")
        }
    }

    @Test("add-credential without a new password, with a wrong keychain password or with the same password again adds nothing")
    func addRefused() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let bytes = try sandbox.keychainBytes()
        let noNewPassword = try sandbox.unlocked(["add-credential", "--insecure-iterations", "1000"])
        #expect(noNewPassword.status != 0)
        let wrong = try sandbox.run(["add-credential", "--insecure-iterations", "1000"], stdin: "wrong\n\(Self.second)\n")
        #expect(wrong.status == 51, "\(wrong.stderr)")
        let same = try sandbox.unlocked(["add-credential", "--insecure-iterations", "1000"], then: [KcfSandbox.password])
        #expect(same.status != 0 && same.stderr.contains("opens the keychain already"), "\(same.stderr)")
        let badKDF = try sandbox.unlocked(["add-credential", "--kdf", "scrypt"], then: [Self.second])
        #expect(badKDF.status == 2, "\(badKDF.stderr)")
        #expect(try sandbox.keychainBytes() == bytes, "the file is as it was")
    }

    @Test("list-credentials prints every slot's id and kind, in the header's order; --json the same as objects")
    func list() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.unlocked(["add-credential", "--insecure-argon2id", "64"], then: [Self.second]).status == 0)
        let ids = try Self.slotIDs(sandbox)
        let listed = try sandbox.unlocked(["list-credentials"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout == """
            \(ids[0])  password, PBKDF2-HMAC-SHA256, 1000 iterations
            \(ids[1])  password, Argon2id, 64 KiB, 1 passes, 1 lanes

            """)
        let json = try sandbox.unlocked(["list-credentials", "--json"])
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(objects.compactMap { $0["id"] as? String } == ids)
        #expect(objects.compactMap { $0["kdf"] as? String } == ["PBKDF2-HMAC-SHA256", "Argon2id"])
        #expect(objects.last?["memoryKiB"] as? Int == 64)
    }

    @Test("remove-credential by id or by a unique start of it; the removed password opens nothing; the last slot stays")
    func remove() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "mail", secret: "kept")
        #expect(try sandbox.unlocked(["add-credential", "--insecure-iterations", "1000"], then: [Self.second]).status == 0)
        let ids = try Self.slotIDs(sandbox)

        // The first password's own slot, by the first 8 digits of its id, opened with that password.
        let removed = try sandbox.unlocked(["remove-credential", String(ids[0].prefix(8))])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.hasPrefix("key slot removed: \(ids[0])"))
        #expect(try Self.slotIDs(sandbox, password: Self.second) == [ids[1]])
        let oldPassword = try sandbox.unlocked(["list-credentials"])
        #expect(oldPassword.status == 51, "the removed password no longer opens the keychain")
        let found = try sandbox.run(["find-generic-password", "-s", "mail", "-w"], extra: ["KCF_PASSWORD": Self.second])
        #expect(found.stdout == "kept\n")

        // The last slot is never removed.
        let bytes = try sandbox.keychainBytes()
        let last = try sandbox.run(["remove-credential", ids[1]], stdin: Self.second + "\n")
        #expect(last.status != 0)
        #expect(last.stderr.contains("last key slot"), "\(last.stderr)")
        #expect(try sandbox.keychainBytes() == bytes)
    }

    @Test("remove-credential: an id that is not ASCII hexadecimal (fullwidth digits neither) or too short is a usage error; one no slot has exits 44")
    func removeRefused() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.unlocked(["add-credential", "--insecure-iterations", "1000"], then: [Self.second]).status == 0)
        let ids = try Self.slotIDs(sandbox)
        let bytes = try sandbox.keychainBytes()
        for bad in ["zz", String(ids[0].prefix(7)), ids[0] + "00", "not-an-id-at-all", "\u{FF11}\u{FF12}\u{FF13}\u{FF14}\u{FF15}\u{FF16}\u{FF17}\u{FF18}"] {
            let result = try sandbox.unlocked(["remove-credential", bad])
            #expect(result.status == 2, "\(bad): \(result.stderr)")
        }
        // An id no slot has: changing its first digit makes one (the two ids are random and 128 bits long).
        let first = ids[0].first == "0" ? "1" : "0"
        let unknown = first + ids[0].dropFirst()
        #expect(!ids.contains(unknown))
        let missing = try sandbox.unlocked(["remove-credential", unknown])
        #expect(missing.status == 44, "\(missing.stderr)")
        #expect(missing.stderr.contains("no key slot has an id starting"))
        #expect(try sandbox.keychainBytes() == bytes, "nothing was removed")
    }
}
