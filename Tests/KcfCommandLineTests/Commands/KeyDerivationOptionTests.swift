import Foundation
import KeychainFile
import Testing

/// `create-keychain` and `change-password` `--kdf argon2id|pbkdf2` and `--insecure-argon2id`: the KDF of the
/// new password slot, read from the file's bytes as SPEC.md §20.1 and §21.1 lay them out (the first slot at 112:
/// type, KDF id, length, id, then 12 parameter bytes) — not from kcf. Argon2id runs at a few KiB, except in the
/// one test of `--kdf argon2id` itself (one 64 MiB derivation, when the keychain is created).
@Suite("kcf --kdf: the KDF of a new password slot")
struct KeyDerivationOptionTests {
    /// The first slot's KDF id and parameter bytes.
    static func firstSlot(_ sandbox: KcfSandbox) throws -> (kdf: UInt8, parameters: [UInt8]) {
        let bytes = try sandbox.keychainBytes()
        return (bytes[113], Array(bytes[132..<144]))
    }

    static func be32(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }

    static func create(_ sandbox: KcfSandbox, _ options: [String]) throws -> KcfProcess.Result {
        try sandbox.run(["create-keychain"] + options, stdin: KcfSandbox.password + "\n")
    }

    @Test("--kdf argon2id writes KDF id 3 at 64 MiB, 3 passes, 4 lanes")
    func argon2idChosen() throws {
        let sandbox = try KcfSandbox()
        let result = try Self.create(sandbox, ["--kdf", "argon2id"])
        #expect(result.status == 0, "\(result.stderr)")
        let slot = try Self.firstSlot(sandbox)
        #expect(slot.kdf == 3)
        #expect(slot.parameters == Self.be32(65_536) + Self.be32(3) + [4, 0, 0, 0])
    }

    @Test("--kdf pbkdf2 with --insecure-iterations writes KDF id 1 with those rounds")
    func pbkdf2Chosen() throws {
        let sandbox = try KcfSandbox()
        let result = try Self.create(sandbox, ["--kdf", "pbkdf2", "--insecure-iterations", "1000"])
        #expect(result.status == 0, "\(result.stderr)")
        let slot = try Self.firstSlot(sandbox)
        #expect(slot.kdf == 1)
        #expect(slot.parameters == Self.be32(1_000) + [UInt8](repeating: 0, count: 8))
    }

    @Test("--insecure-argon2id writes Argon2id at that memory, 1 pass, 1 lane, with a warning; show-keychain-info shows it")
    func insecureArgon2id() throws {
        let sandbox = try KcfSandbox()
        let result = try Self.create(sandbox, ["--insecure-argon2id", "64"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("warning"), "\(result.stderr)")
        let slot = try Self.firstSlot(sandbox)
        #expect(slot.kdf == 3)
        #expect(slot.parameters == Self.be32(64) + Self.be32(1) + [1, 0, 0, 0])
        let info = try sandbox.unlocked(["show-keychain-info"])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("password, Argon2id, 64 KiB, 1 passes, 1 lanes"), "\(info.stdout)")
        let json = try sandbox.unlocked(["show-keychain-info", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let slots = try #require(object["keySlots"] as? [[String: Any]])
        #expect(slots.count == 1)
        #expect(slots.first?["kdf"] as? String == "Argon2id")
        #expect(slots.first?["memoryKiB"] as? Int == 64)
        #expect(slots.first?["passes"] as? Int == 1)
        #expect(slots.first?["lanes"] as? Int == 1)
    }

    @Test("change-password writes the KDF asked for: Argon2id, then PBKDF2; the new password opens the keychain")
    func changePassword() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        #expect(try Self.firstSlot(sandbox).kdf == 1)
        let toArgon2 = try sandbox.unlocked(["change-password", "--insecure-argon2id", "96"], then: ["second password"])
        #expect(toArgon2.status == 0, "\(toArgon2.stderr)")
        #expect(try Self.firstSlot(sandbox).kdf == 3)
        #expect(try Self.firstSlot(sandbox).parameters == Self.be32(96) + Self.be32(1) + [1, 0, 0, 0])
        _ = try Keychain.open(at: sandbox.keychain, credential: .password("second password"))
        let toPBKDF2 = try sandbox.run(["change-password", "--kdf", "pbkdf2", "--insecure-iterations", "1200"],
                                       stdin: "second password\nthird password\n")
        #expect(toPBKDF2.status == 0, "\(toPBKDF2.stderr)")
        #expect(try Self.firstSlot(sandbox).kdf == 1)
        #expect(try Self.firstSlot(sandbox).parameters == Self.be32(1_200) + [UInt8](repeating: 0, count: 8))
        _ = try Keychain.open(at: sandbox.keychain, credential: .password("third password"))
    }

    @Test("A --kdf other than argon2id and pbkdf2, or a choice that contradicts itself, is a usage error (exit 2) that creates nothing",
          arguments: [
            ["--kdf", "scrypt"], ["--kdf", "Argon2id"], ["--kdf", ""], ["--kdf", "argon2id", "--iterations", "300000"],
            ["--kdf", "argon2id", "--insecure-iterations", "1000"], ["--kdf", "pbkdf2", "--insecure-argon2id", "64"],
            ["--insecure-iterations", "1000", "--insecure-argon2id", "64"], ["--insecure-argon2id", "7"],
            ["--insecure-argon2id", "1048577"], ["--insecure-argon2id", "many"],
          ])
    func usageErrors(_ options: [String]) throws {
        let sandbox = try KcfSandbox()
        let result = try Self.create(sandbox, options)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(options[0]), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.keychain))
    }

    @Test("change-password refuses a bad --kdf before it asks for anything, and the password is unchanged")
    func changePasswordUsageError() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        let before = try sandbox.keychainBytes()
        let result = try sandbox.unlocked(["change-password", "--kdf", "bcrypt"], then: ["new password"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(try sandbox.keychainBytes() == before)
    }

    @Test("--kdf argon2id for a version 1 file fails with invalidParameter's status (206), saying why, and creates nothing")
    func versionOneRefusesArgon2id() throws {
        let sandbox = try KcfSandbox()
        let result = try Self.create(sandbox, ["--format-version", "1", "--kdf", "argon2id"])
        #expect(result.status == 206, "\(result.stderr)")
        #expect(result.stderr.contains("format version 2"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.keychain))
    }

    @Test("The help of create-keychain and change-password names --kdf and its two values")
    func help() throws {
        let sandbox = try KcfSandbox()
        for command in ["create-keychain", "change-password"] {
            let help = try sandbox.run(["help", command])
            #expect(help.status == 0)
            #expect(help.stdout.contains("[--kdf KDF]"), "\(help.stdout)")
            let line = help.stdout.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("--kdf KDF ") }
            #expect(line?.contains("argon2id") == true && line?.contains("pbkdf2") == true, "\(help.stdout)")
            #expect(help.stdout.contains("[--insecure-argon2id KIB]"), "\(help.stdout)")
        }
    }
}
