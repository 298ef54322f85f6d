import Foundation
import KeychainFile
import Testing

/// `kcf` on a damaged format version 3 keychain (SPEC.md §37.6): a secret box destroyed beyond what parity repairs
/// fails reads, and `--recover`, `salvage` and `repair` keep every other item; the last two refuse a password scoped
/// to some access groups, before anything is written.
@Suite("kcf: damaged version 3 keychains")
struct DamageV3CommandTests {
    static let scopedPassword = "scoped to TEAM.a"

    /// 20 items of TEAM.a, one of TEAM.b with a 20,000-byte secret, then 5 more of TEAM.a, each in its own commit
    /// but the first twenty; with a password scoped to TEAM.a. The large secret's box is then overwritten, 12,000
    /// bytes of it: more than the chunk's parity rebuilds. The log is under one chunk, so its bytes lie in the file
    /// as they are, after the prefix, and the large item's record begins where the file ended before it.
    static func damagedKeychain(_ sandbox: KcfSandbox) throws -> [UInt8] {
        var options = Keychain.CreationOptions(passwordIterations: .insecureForTesting(1_000))
        options.formatVersion = 3
        let keychain = try Keychain.create(at: sandbox.keychain, credential: .password(KcfSandbox.password), options: options)
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<20 {
                try batch.add(GenericPassword(service: "svc", account: "a \(index)", password: "secret \(index)", accessGroup: "TEAM.a"))
            }
        }
        try keychain.add(GenericPassword(service: "svc", account: "b", password: "first of b", accessGroup: "TEAM.b"))
        try keychain.addCredential(
            .password(scopedPassword), scope: .groups(["TEAM.a"]), keyDerivation: .pbkdf2(.insecureForTesting(1_000)))
        let before = try sandbox.keychainBytes().count
        try keychain.add(GenericPassword(service: "svc", account: "large", accessGroup: "TEAM.b", value: [UInt8](repeating: 9, count: 20_000)))
        for index in 20..<25 {
            try keychain.add(GenericPassword(service: "svc", account: "a \(index)", password: "secret \(index)", accessGroup: "TEAM.a"))
        }
        var bytes = try sandbox.keychainBytes()
        try #require(bytes.count < before + 57_088)
        for offset in (before + 1_000)..<(before + 13_000) { bytes[offset] ^= 0x3C }
        try Data(bytes).write(to: URL(fileURLWithPath: sandbox.keychain))
        return bytes
    }

    /// The number of generic passwords a `dump-keychain` printed.
    static func count(_ dump: String) -> Int { dump.components(separatedBy: "class: \"genp\"").count - 1 }

    @Test("A secret box destroyed beyond parity: reads fail, --recover, salvage and repair keep every other item (exit 5, the loss on stderr), and the repaired keychain takes writes")
    func recoverSalvageRepair() throws {
        let sandbox = try KcfSandbox()
        let damaged = try Self.damagedKeychain(sandbox)
        let dump = try sandbox.unlocked(["dump-keychain"])
        #expect(dump.status != 0, "\(dump.stdout)")
        #expect(try sandbox.unlocked(["add-generic-password", "-a", "x", "-s", "new", "-w", "pw"]).status != 0)
        #expect(try sandbox.keychainBytes() == damaged)

        let recovered = try sandbox.unlocked(["--recover", "dump-keychain"])
        #expect(recovered.status == 5, "\(recovered.stderr)")
        #expect(recovered.stderr.contains("damage:"))
        #expect(Self.count(recovered.stdout) == 26, "\(recovered.stdout)")

        let salvaged = sandbox.file("salvaged.kcf")
        let salvage = try sandbox.unlocked(["salvage", salvaged])
        #expect(salvage.status == 5, "\(salvage.stderr)")
        #expect(salvage.stdout.contains("items written: 26"), "\(salvage.stdout)")
        #expect(Self.count(try sandbox.unlocked(["-k", salvaged, "dump-keychain"]).stdout) == 26)

        let backup = sandbox.file("backup.kcf")
        let repair = try sandbox.unlocked(["repair", "--backup", backup])
        #expect(repair.status == 5, "\(repair.stderr)")
        #expect(repair.stdout.contains("items written: 26"))
        #expect(try sandbox.keychainBytes(backup) == damaged)
        let after = try sandbox.unlocked(["dump-keychain"])
        #expect(after.status == 0 && Self.count(after.stdout) == 26, "\(after.stderr)")
        #expect(try sandbox.unlocked(["add-generic-password", "-a", "x", "-s", "new", "-w", "pw"]).status == 0)
        // The scoped password opens the repaired file, and reaches TEAM.a alone.
        let scoped = try sandbox.run(["dump-keychain"], stdin: Self.scopedPassword + "\n")
        #expect(scoped.status == 0 && Self.count(scoped.stdout) == 25, "\(scoped.stderr)")
    }

    @Test("salvage and repair with a password scoped to some groups fail, writing nothing; --recover with it reads its group")
    func scopedRefused() throws {
        let sandbox = try KcfSandbox()
        let damaged = try Self.damagedKeychain(sandbox)
        let salvaged = sandbox.file("salvaged.kcf"), backup = sandbox.file("backup.kcf")
        let salvage = try sandbox.run(["salvage", salvaged], stdin: Self.scopedPassword + "\n")
        #expect(salvage.status != 0 && salvage.stderr.contains("reaches only some access groups"), "\(salvage.stderr)")
        let repair = try sandbox.run(["repair", "--backup", backup], stdin: Self.scopedPassword + "\n")
        #expect(repair.status != 0, "\(repair.stdout)")
        #expect(!FileManager.default.fileExists(atPath: salvaged) && !FileManager.default.fileExists(atPath: backup))
        #expect(try sandbox.keychainBytes() == damaged)
        // TEAM.a's records all verify: the destroyed box is TEAM.b's, which the chain tag does not cover.
        let recovered = try sandbox.run(["--recover", "dump-keychain"], stdin: Self.scopedPassword + "\n")
        #expect(recovered.status == 0 && Self.count(recovered.stdout) == 25, "\(recovered.stderr)")
    }
}
