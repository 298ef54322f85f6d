import Foundation
import KeychainFile
import Testing

/// `kcf upgrade`, and `kcf compact` on a version 1 file (SPEC.md §12, §26.7): the version is read from the file's
/// bytes 8–9, the items through the library — not from kcf's own words.
@Suite("kcf upgrade: a version 1 keychain rewritten as version 2")
struct UpgradeCommandTests {
    static func versionOnDisk(_ sandbox: KcfSandbox) throws -> Int {
        let bytes = try sandbox.keychainBytes()
        return Int(bytes[8]) << 8 | Int(bytes[9])
    }

    /// A version 1 keychain with three generic passwords, one of them changed.
    static func versionOne() throws -> KcfSandbox {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain(formatVersion: 1)
        for index in 0..<3 { try sandbox.addGeneric(account: "ann", service: "svc \(index)", secret: "secret \(index)") }
        #expect(try sandbox.unlocked(["add-generic-password", "-U", "-a", "ann", "-s", "svc 1", "-w", "changed"]).status == 0)
        try #require(try versionOnDisk(sandbox) == 1)
        return sandbox
    }

    @Test("upgrade writes version 2 with the same items, says so, and a second upgrade changes nothing and exits 0")
    func upgrades() throws {
        let sandbox = try Self.versionOne()
        let before = try Keychain.open(at: sandbox.keychain, credential: .password(KcfSandbox.password))
        let epoch = try before.statistics().epoch
        let result = try sandbox.unlocked(["upgrade"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("to format version 2: 3 items"), "\(result.stdout)")
        #expect(try Self.versionOnDisk(sandbox) == 2)
        let after = try Keychain.open(at: sandbox.keychain, credential: .password(KcfSandbox.password))
        #expect(try after.statistics().epoch == epoch + 1)
        #expect(try after.password(forService: "svc 1", account: "ann") == "changed")
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "svc 2", "-w"]).stdout == "secret 2\n")
        let bytes = try sandbox.keychainBytes()
        let again = try sandbox.unlocked(["upgrade"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("already format version 2"), "\(again.stdout)")
        #expect(try sandbox.keychainBytes() == bytes, "upgrading a version 2 file changes nothing")
    }

    @Test("A wrong password exits 51 and leaves the file as it was; a missing keychain exits 220")
    func failures() throws {
        let sandbox = try Self.versionOne()
        let bytes = try sandbox.keychainBytes()
        #expect(try sandbox.run(["upgrade"], stdin: "wrong\n").status == 51)
        #expect(try sandbox.keychainBytes() == bytes)
        #expect(try sandbox.run(["upgrade", "-k", sandbox.file("none.kcf")]).status == 220)
    }

    @Test("compact on a version 1 keychain writes version 2 too")
    func compactUpgrades() throws {
        let sandbox = try Self.versionOne()
        #expect(try sandbox.unlocked(["compact"]).status == 0)
        #expect(try Self.versionOnDisk(sandbox) == 2)
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "svc 1", "-w"]).stdout == "changed\n")
    }
}
