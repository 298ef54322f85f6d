import Foundation
import KeychainFile
import Testing

/// `kcf change-password` gives the keychain a new master key by default, so that an old copy of the file and the
/// old password read nothing added after the change (issue 31); `--keep-keys` replaces the key slot alone. The
/// attack is played with the library's public API against the files kcf wrote, with `--keep-keys` as the
/// control that shows the attack works.
@Suite("kcf change-password: a new master key by default, --keep-keys the key slot alone")
struct ChangePasswordRotationCommandTests {
    static let newPassword = "a new password"
    static let distinctive = "added after the change: 5d0e-a81c"

    /// What an attacker holding `oldCopy` and the old password reads of the sandbox's keychain now: the secrets,
    /// or the error that stops it. A `Keychain` opened on the old copy with the old password holds the old master
    /// key; the current file is then put where the old copy was, and that `Keychain` catches up with it as with a
    /// backup restored over its path (`refresh()`) — with the master key it holds, then the old password.
    static func attack(_ sandbox: KcfSandbox, oldCopy: [UInt8]) throws -> Result<[String], KeychainError> {
        let stolen = sandbox.file("old-copy.kcf")
        try Data(oldCopy).write(to: URL(fileURLWithPath: stolen))
        let attacker = try Keychain.open(at: stolen, credential: .password(KcfSandbox.password))
        #expect(try attacker.search(Query(.genericPassword, limit: .all)).count == 1, "the old copy opens with the old password")
        let staged = sandbox.file("new-copy.kcf")
        try Data(try sandbox.keychainBytes()).write(to: URL(fileURLWithPath: staged))
        #expect(rename(staged, stolen) == 0)
        do throws(KeychainError) {
            // As after a backup is restored over the path: the lock file's counter did not change.
            try attacker.refresh()
            let results = try attacker.search(Query(.genericPassword, limit: .all), returning: [.data])
            return .success(results.map { String(decoding: $0.value ?? [], as: UTF8.self) }.sorted())
        } catch {
            return .failure(error)
        }
    }

    /// A keychain with one item, its bytes (the old copy), `change-password` with `options`, then an item added
    /// with the new password whose secret is ``distinctive``.
    static func changed(_ options: [String]) throws -> (sandbox: KcfSandbox, oldCopy: [UInt8], before: [String]) {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "mail", secret: "before")
        let oldCopy = try sandbox.keychainBytes()
        let before = try CredentialCommandTests.slotIDs(sandbox)
        let changed = try sandbox.unlocked(["change-password", "--insecure-iterations", "1000"] + options, then: [newPassword])
        #expect(changed.status == 0, "\(changed.stderr)")
        let added = try sandbox.run(["add-generic-password", "-a", "bob", "-s", "mail", "-w"], stdin: "\(newPassword)\n\(distinctive)\n")
        #expect(added.status == 0, "\(added.stderr)")
        return (sandbox, oldCopy, before)
    }

    @Test("change-password: a new key slot under a new master key; an old copy and the old password read nothing added after it")
    func rotates() throws {
        let (sandbox, oldCopy, before) = try Self.changed([])
        let after = try CredentialCommandTests.slotIDs(sandbox, password: Self.newPassword)
        #expect(after.count == 1 && after != before, "\(before) → \(after)")
        let listed = try sandbox.run(["list-credentials"], stdin: Self.newPassword + "\n")
        #expect(listed.status == 0 && listed.stdout.hasPrefix(after[0] + "  password"), "\(listed.stdout)\(listed.stderr)")
        #expect(try sandbox.unlocked(["find-generic-password", "-a", "ann"]).status == 51, "the old password opens the file")
        let found = try sandbox.run(["find-generic-password", "-a", "bob", "-w"], stdin: Self.newPassword + "\n")
        #expect(found.stdout == Self.distinctive + "\n", "\(found.stderr)")
        #expect(try Self.attack(sandbox, oldCopy: oldCopy) == .failure(.wrongCredentials))
    }

    @Test("change-password --keep-keys replaces the slot alone: the old copy's master key still reads what is added after it")
    func keepKeys() throws {
        let (sandbox, oldCopy, before) = try Self.changed(["--keep-keys"])
        let after = try CredentialCommandTests.slotIDs(sandbox, password: Self.newPassword)
        #expect(after.count == 1 && after != before, "\(before) → \(after)")
        #expect(try sandbox.unlocked(["find-generic-password", "-a", "ann"]).status == 51, "the old password opens the file")
        // The weakness --keep-keys documents, and the proof that the attack in rotates() would see it.
        #expect(try Self.attack(sandbox, oldCopy: oldCopy) == .success(["before", Self.distinctive].sorted()))
    }

    @Test("With another credential, change-password refuses: non-zero, a hint naming --keep-keys and remove-credential, the file unchanged")
    func refusedWithOtherCredentials() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain()
        try sandbox.addGeneric(account: "ann", service: "mail", secret: "kept")
        #expect(try sandbox.unlocked(["add-credential", "--insecure-iterations", "1000"], then: ["second"]).status == 0)
        let bytes = try sandbox.keychainBytes()
        // Only the keychain's password on stdin: the refusal must come before the new password is read.
        let refused = try sandbox.unlocked(["change-password", "--insecure-iterations", "1000"], then: [])
        #expect(refused.status == 1, "\(refused.stderr)")
        for fragment in ["1 other credential", "--keep-keys", "old copy", "list-credentials", "remove-credential", "add-credential"] {
            #expect(refused.stderr.contains(fragment), "no \(fragment) in \(refused.stderr)")
        }
        let unchanged = try sandbox.keychainBytes() == bytes
        #expect(unchanged, "a refused change-password altered the file")
        #expect(try sandbox.unlocked(["find-generic-password", "-a", "ann", "-w"]).stdout == "kept\n")

        let kept = try sandbox.unlocked(["change-password", "--keep-keys", "--insecure-iterations", "1000"], then: [Self.newPassword])
        #expect(kept.status == 0, "\(kept.stderr)")
        for password in [Self.newPassword, "second"] {
            #expect(try sandbox.run(["find-generic-password", "-a", "ann", "-w"], stdin: password + "\n").stdout == "kept\n")
        }
        #expect(try sandbox.unlocked(["find-generic-password", "-a", "ann"]).status == 51)
    }

    @Test("The help of change-password names --keep-keys and what it does not protect against")
    func help() throws {
        let help = try KcfSandbox().run(["help", "change-password"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("[--keep-keys]"), "\(help.stdout)")
        let line = help.stdout.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("--keep-keys") }
        #expect(line?.contains("old copy") == true, "\(help.stdout)")
    }
}
