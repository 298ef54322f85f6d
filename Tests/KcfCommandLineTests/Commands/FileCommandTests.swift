import Foundation
import Testing

@Suite("kcf: change-password, compact, verify, salvage, dump-keychain")
struct FileCommandTests {
    @Test("change-password: the old password no longer opens the keychain, the new one does, items intact")
    func changePassword() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "mail", secret: "kept")
        let changed = try sandbox.unlocked(["change-password", "--insecure-iterations", "1000"], then: ["a new password"])
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(try sandbox.unlocked(["find-generic-password", "-a", "ann"]).status == 51)
        let found = try sandbox.run(["find-generic-password", "-a", "ann", "-w"], stdin: "a new password\n")
        #expect(found.status == 0)
        #expect(found.stdout == "kept\n")
        // A wrong old password changes nothing.
        let refused = try sandbox.run(["change-password", "--insecure-iterations", "1000"], stdin: "wrong\nother\n")
        #expect(refused.status == 51)
        #expect(try sandbox.run(["find-generic-password", "-a", "ann", "-w"], stdin: "a new password\n").status == 0)
    }

    @Test("compact prints the statistics before and after, in a new epoch, and keeps the live items")
    func compact() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "a", secret: "one")
        try sandbox.addGeneric(account: "ann", service: "b", secret: "two")
        try sandbox.addGeneric(account: "ann", service: "a", secret: "three", extra: ["-U"])
        #expect(try sandbox.unlocked(["delete-generic-password", "-s", "b"]).status == 0)
        let sizeBefore = try sandbox.keychainBytes().count

        let result = try sandbox.unlocked(["compact"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("before: 1 items, \(sizeBefore) bytes"))
        #expect(lines[0].hasSuffix("epoch 1"))
        #expect(lines[1].hasPrefix("after:  1 items, \(try sandbox.keychainBytes().count) bytes"))
        #expect(lines[1].hasSuffix("epoch 2"))
        #expect(lines[2].hasPrefix("reclaimed \(sizeBefore - (try sandbox.keychainBytes().count)) bytes; head 2."))
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "a", "-w"]).stdout == "three\n")
    }

    @Test("verify: 0 on a good file, 93 on a damaged copy, 3 on a torn tail; salvage keeps every item that authenticates")
    func verifyAndSalvage() throws {
        let sandbox = try KcfSandbox()
        // Version 1, whatever the default: its records are found by its layout, and its torn-tail rules apply
        // (version 2's parity mends a bit flipped in a record or 5 bytes cut from its end).
        try sandbox.createKeychain(formatVersion: 1)
        try sandbox.addGeneric(account: "ann", service: "first", secret: "1")
        try sandbox.addGeneric(account: "ann", service: "second", secret: "2")
        try sandbox.addGeneric(account: "ann", service: "third", secret: "3")

        let good = try sandbox.unlocked(["verify"])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.contains("items: 3 (generic passwords 3, internet passwords 0, certificates 0, keys 0; identities 0)"))
        #expect(good.stdout.contains("secrets: 3 decrypted and authenticated, 3 bytes"))
        #expect(good.stdout.contains("head 1.3."))
        #expect(good.stdout.contains("torn tail: none"))
        #expect(good.stdout.hasSuffix("result: OK\n"))

        let bytes = try sandbox.keychainBytes()
        let records = recordOffsets(of: bytes)
        #expect(records.count == 3)
        var damaged = bytes
        damaged[records[1].lowerBound + 40] ^= 0x01
        let damagedPath = sandbox.file("damaged.kcf")
        try Data(damaged).write(to: URL(fileURLWithPath: damagedPath))
        let bad = try sandbox.unlocked(["verify", damagedPath])
        #expect(bad.status == 93, "\(bad.stdout) \(bad.stderr)")
        #expect(bad.stderr.contains("corrupted keychain file at byte"))
        #expect(bad.stderr.contains("kcf salvage"))

        let salvagedPath = sandbox.file("salvaged.kcf")
        let salvage = try sandbox.unlocked(["salvage", salvagedPath, damagedPath])
        #expect(salvage.status == 5, "\(salvage.stderr)")
        #expect(salvage.stdout.contains("items written: 2"))
        #expect(salvage.stdout.contains("last record read: 3"))
        #expect(salvage.stdout.contains("damage: an item of unknown id: the version at byte"))
        #expect(try sandbox.unlocked(["verify", salvagedPath]).status == 0)
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "first", "-w", salvagedPath]).stdout == "1\n")
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "second", salvagedPath]).status == 44)
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "third", "-w", salvagedPath]).stdout == "3\n")

        let tornPath = sandbox.file("torn.kcf")
        try Data(bytes.dropLast(5)).write(to: URL(fileURLWithPath: tornPath))
        let torn = try sandbox.unlocked(["verify", tornPath])
        #expect(torn.status == 3, "\(torn.stdout) \(torn.stderr)")
        #expect(torn.stdout.contains("items: 2 "))
        #expect(torn.stdout.contains("result: TORN TAIL"))

        let notKeychain = sandbox.file("not.kcf")
        try Data("just some text, not a keychain".utf8).write(to: URL(fileURLWithPath: notKeychain))
        #expect(try sandbox.unlocked(["verify", notKeychain]).status == 93)
    }

    @Test("dump-keychain --json parses, lists every item, and holds secrets only with -d")
    func dumpJSON() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "mail", secret: "generic-secret-value")
        let internet = try sandbox.unlocked(["add-internet-password", "-a", "ann", "-s", "example.com", "-r", "htps", "-w"],
                                            then: ["internet-secret-value"])
        #expect(internet.status == 0)

        let plain = try sandbox.unlocked(["dump-keychain", "--json"])
        #expect(plain.status == 0, "\(plain.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(plain.stdout.utf8)) as? [String: Any])
        #expect(object["keychain"] as? String == sandbox.keychain)
        let items = try #require(object["items"] as? [[String: Any]])
        #expect(items.map { $0["class"] as? String } == ["genericPassword", "internetPassword"])
        let attributes = try #require(items[1]["attributes"] as? [String: Any])
        #expect(attributes["server"] as? String == "example.com")
        #expect(attributes["protocol"] as? String == "https", "codes are named, under the SPEC's attribute names")
        #expect(items.allSatisfy { $0["secret"] == nil && $0["secretBase64"] == nil })
        #expect(!plain.stdout.contains("secret-value"))

        let withSecrets = try sandbox.unlocked(["dump-keychain", "--json", "-d", "--yes"])
        #expect(withSecrets.status == 0, "\(withSecrets.stderr)")
        let full = try #require(try JSONSerialization.jsonObject(with: Data(withSecrets.stdout.utf8)) as? [String: Any])
        let fullItems = try #require(full["items"] as? [[String: Any]])
        #expect(fullItems.map { $0["secret"] as? String } == ["generic-secret-value", "internet-secret-value"])
        #expect(fullItems[0]["secretBase64"] as? String == Data("generic-secret-value".utf8).base64EncodedString())

        let text = try sandbox.unlocked(["dump-keychain"])
        #expect(text.status == 0)
        #expect(text.stdout.contains("class: \"genp\"") && text.stdout.contains("class: \"inet\""))
        #expect(!text.stdout.contains("secret-value"))
    }
}
