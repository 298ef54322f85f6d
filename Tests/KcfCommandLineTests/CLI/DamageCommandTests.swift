import Foundation
import KeychainFile
import Testing

/// `kcf` on damaged keychains: no command reports an empty or partial keychain as success, no write cuts away
/// what may hold committed items, and `--recover`, `salvage` and `repair` keep every item that authenticates.
/// The damaged keychains are format version 1, whatever the default: the tests find its records by its layout
/// (the header's length at bytes 12–15) and flip one bit, which version 2's parity would mend.
@Suite("kcf: damaged keychains")
struct DamageCommandTests {
    /// Fills the sandbox keychain, of format version 1, with `count` generic passwords ("service N" / "account" /
    /// "secret N") through the library, and compacts it into one record per 4,096 items.
    static func compactedKeychain(_ sandbox: KcfSandbox, count: Int) throws {
        var options = Keychain.CreationOptions(passwordIterations: .insecureForTesting(1_000))
        options.formatVersion = 1
        let keychain = try Keychain.create(at: sandbox.keychain, credential: .password(KcfSandbox.password), options: options)
        keychain.keepsFormatVersion = true
        try keychain.batch { (batch) throws(KeychainError) in
            for index in 0..<count {
                try batch.add(GenericPassword(service: "service \(index)", account: "account", password: "secret \(index)"))
            }
        }
        try keychain.compact()
        try #require(keychain.fileFormatVersion == 1)
    }

    /// The byte offset of the first record (the header's length, bytes 12–15).
    static func firstRecord(_ bytes: [UInt8]) -> Int {
        Int(bytes[12]) << 24 | Int(bytes[13]) << 16 | Int(bytes[14]) << 8 | Int(bytes[15])
    }

    static func flip(_ sandbox: KcfSandbox, at offset: Int) throws -> [UInt8] {
        var bytes = try sandbox.keychainBytes()
        bytes[offset] ^= 0x08
        try Data(bytes).write(to: URL(fileURLWithPath: sandbox.keychain))
        return bytes
    }

    @Test("One flipped bit in a compacted keychain: reads fail, writes change nothing, --recover, salvage and repair keep 1,999 of 2,000")
    func compactedKeychainDamage() throws {
        let sandbox = try KcfSandbox()
        try Self.compactedKeychain(sandbox, count: 2_000)
        let size = try sandbox.keychainBytes().count
        let start = Self.firstRecord(try sandbox.keychainBytes())
        let damaged = try Self.flip(sandbox, at: start + (size - start) / 2)

        let dump = try sandbox.unlocked(["dump-keychain"])
        #expect(dump.status == 93, "\(dump.stderr)")
        #expect(dump.stderr.contains("--recover"))
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "service 7", "-w"]).status == 93)
        for command in [["add-generic-password", "-a", "x", "-s", "new", "-w", "pw"], ["compact"]] {
            let result = try sandbox.unlocked(command)
            #expect(result.status != 0, "\(command[0]) exited 0")
        }
        let change = try sandbox.unlocked(["change-password"], then: ["new password", "new password"])
        #expect(change.status != 0)
        #expect(try sandbox.keychainBytes() == damaged, "no command changed the damaged file")

        // Without its lock file (a copy moved elsewhere) the same.
        try FileManager.default.removeItem(atPath: sandbox.keychain + ".lock")
        let find = try sandbox.unlocked(["find-generic-password", "-s", "service 7", "-w"])
        #expect(find.status == 93, "\(find.stdout) \(find.stderr)")
        #expect(find.stderr.contains("may hold committed items"))
        #expect(try sandbox.unlocked(["add-generic-password", "-a", "x", "-s", "new", "-w", "pw"]).status != 0)
        #expect(try sandbox.keychainBytes() == damaged)

        let recovered = try sandbox.unlocked(["--recover", "dump-keychain"])
        #expect(recovered.status == 5, "\(recovered.stderr)")
        #expect(recovered.stderr.contains("damage:"))
        #expect(recovered.stdout.components(separatedBy: "class: \"genp\"").count - 1 == 1_999)

        let salvaged = sandbox.file("salvaged.kcf")
        let salvage = try sandbox.unlocked(["salvage", salvaged])
        #expect(salvage.status == 5, "\(salvage.stderr)")
        #expect(salvage.stdout.contains("items written: 1999"))

        let backup = sandbox.file("backup.kcf")
        let repair = try sandbox.unlocked(["repair", "--backup", backup])
        #expect(repair.status == 5, "\(repair.stderr)")
        #expect(repair.stdout.contains("items written: 1999"))
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: backup))) == damaged)
        let verify = try sandbox.unlocked(["verify"])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        #expect(verify.stdout.contains("items: 1999 "))
        #expect(try sandbox.unlocked(["add-generic-password", "-a", "x", "-s", "new", "-w", "pw"]).status == 0)
    }

    @Test("A crash remnant after the acknowledged end is reported on stderr by every command that opens the keychain, until a write cuts it")
    func crashRemnantIsReported() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "first", secret: "1")
        // What a crash during an append can leave after the last acknowledged record: an unwritten extent.
        let handle = try #require(FileHandle(forWritingAtPath: sandbox.keychain))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0, count: 300))
        try handle.close()
        for command in [["find-generic-password", "-s", "first", "-w"], ["dump-keychain"], ["verify"]] {
            let result = try sandbox.unlocked(command)
            #expect(result.stderr.contains("warning:") && result.stderr.contains("ignored 300 bytes"), "\(command[0]): \(result.stderr)")
            #expect(result.status == (command[0] == "verify" ? 3 : 0), "\(command[0]): \(result.stderr)")
        }
        try sandbox.addGeneric(account: "ann", service: "second", secret: "2")
        let after = try sandbox.unlocked(["find-generic-password", "-s", "first", "-w"])
        #expect(after.stdout == "1\n" && after.stderr.isEmpty, "\(after.stderr)")
    }

    @Test("One flipped bit in an older record: every command fails as before, --recover and salvage keep every other item")
    func olderRecordDamage() throws {
        let sandbox = try KcfSandbox()
        try Self.compactedKeychain(sandbox, count: 2_000)
        for index in 0..<5 { try sandbox.addGeneric(account: "late", service: "late \(index)", secret: "\(index)") }
        let start = Self.firstRecord(try sandbox.keychainBytes())
        _ = try Self.flip(sandbox, at: start + 30_000)
        #expect(try sandbox.unlocked(["find-generic-password", "-s", "late 3", "-w"]).status == 93)
        let recovered = try sandbox.unlocked(["--recover", "find-generic-password", "-s", "late 3", "-w"])
        #expect(recovered.status == 5)
        #expect(recovered.stdout == "3\n")
        let salvage = try sandbox.unlocked(["salvage", sandbox.file("salvaged.kcf")])
        #expect(salvage.stdout.contains("items written: 2004"), "\(salvage.stdout)")
    }
}
