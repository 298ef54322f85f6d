import Foundation
import Testing
@testable import KeychainFile

/// `KCF_KDF_MEMORY_LIMIT`: the cap, in MiB, on the memory a key slot's Argon2id may ask for before kcf refuses
/// to open the keychain (`OpenOptions.keyDerivationMemoryLimit`, SPEC §20.3).
@Suite("kcf: KCF_KDF_MEMORY_LIMIT")
struct KeyDerivationMemoryLimitTests {
    /// Replaces the password slot of the sandbox keychain (version 2) with an Argon2id slot of `memoryKiB` for
    /// the same password and master key, in both header pages: what another implementation may write.
    static func useArgon2idSlot(_ sandbox: KcfSandbox, memoryKiB: UInt32) throws {
        let keychain = try Keychain.open(at: sandbox.keychain, credential: .password(KcfSandbox.password))
        let log = try #require(keychain.withLock { keychain.log as? RecordLogV2 })
        let header = log.state.header, master = log.masterKey
        var random = SystemRandomNumberGenerator()
        let slot = HeaderKeySlot.committed(try CommittedKeySlot.make(
            for: .password(KcfSandbox.password), kdf: .argon2id(memoryKiB: memoryKiB, passes: 1, lanes: 1), masterKey: master,
            fileID: header.fileID, using: &random))
        let replaced = header.replacingSlots([slot])
        let page = HeaderPage.encode(replaced.encode(headerKey: try replaced.epochKeys(masterKey: master).header))
        let handle = try #require(FileHandle(forUpdatingAtPath: sandbox.keychain))
        defer { try? handle.close() }
        for offset in OpenedHeaderV2.pageOffsets {
            try handle.seek(toOffset: UInt64(offset))
            try handle.write(contentsOf: Data(page))
        }
    }

    @Test("A slot above the cap is refused with the limit's status, naming both sizes; raising the cap opens it")
    func capFromTheEnvironment() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain(formatVersion: 2)
        try sandbox.addGeneric(account: "ann", service: "svc", secret: "s3cret")
        try Self.useArgon2idSlot(sandbox, memoryKiB: 3_072)
        let find = ["find-generic-password", "-s", "svc", "-a", "ann", "-w"]

        let refused = try sandbox.run(find, stdin: KcfSandbox.password + "\n", extra: ["KCF_KDF_MEMORY_LIMIT": "2"])
        #expect(refused.status == 148, "\(refused.stderr)")
        #expect(refused.stderr.contains("3 MiB") && refused.stderr.contains("2 MiB"), "\(refused.stderr)")
        #expect(refused.stdout.isEmpty)

        let opened = try sandbox.run(find, stdin: KcfSandbox.password + "\n", extra: ["KCF_KDF_MEMORY_LIMIT": "3"])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdout == "s3cret\n")
        // Unset: the library's 1 GiB.
        #expect(try sandbox.run(find, stdin: KcfSandbox.password + "\n").stdout == "s3cret\n")
    }

    @Test("A value that is not a whole number of MiB from 1 to 4096 is a usage error, before any password is read")
    func malformedValues() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        for value in ["", "0", "4097", "1.5", "one", "-3"] {
            let result = try sandbox.run(["show-keychain-info"], stdin: KcfSandbox.password + "\n", extra: ["KCF_KDF_MEMORY_LIMIT": value])
            #expect(result.status == 2, "\(value): \(result.stderr)")
            #expect(result.stderr.contains("KCF_KDF_MEMORY_LIMIT"), "\(value): \(result.stderr)")
        }
    }
}
