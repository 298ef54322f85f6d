import Foundation
import Testing
@testable import KeychainFile

/// kcf with a credential scoped to access groups (Docs/FormatVersion3.md §2.8): `add-credential --groups`, the scope in
/// `list-credentials`, and exit status 30 (errSecMissingEntitlement) for what lies outside it.
@Suite("kcf with a credential scoped to access groups (format version 3)")
struct ScopedCredentialCommandTests {
    static let groupA = "com.example.a"
    static let groupB = "com.example.b"
    static let scopedPassword = "scoped to group a"

    /// A version 3 keychain at the sandbox's path holding `items` (generic passwords of service "svc"), made with the
    /// library: kcf does not create version 3 files while the version is being built.
    static func sandbox(
        items: [(group: String, account: String, secret: String)] = [(groupA, "a", "secret of a"), (groupB, "b", "secret of b")]
    ) throws -> (sandbox: KcfSandbox, keychain: Keychain) {
        let sandbox = try KcfSandbox()
        var options = Keychain.CreationOptions(passwordIterations: .insecureForTesting(1_000))
        options.formatVersion = 3
        let keychain = try Keychain.create(at: sandbox.keychain, credential: .password(KcfSandbox.password), options: options)
        for item in items {
            try keychain.add(GenericPassword(service: "svc", account: item.account, password: item.secret, accessGroup: item.group))
        }
        return (sandbox, keychain)
    }

    @Test("add-credential --groups adds a password that reaches group A only; list-credentials shows it; outside A kcf exits 30")
    func scopedPassword() throws {
        let sandbox = try Self.sandbox().sandbox
        let added = try sandbox.unlocked(["add-credential", "--insecure-iterations", "1000", "--groups", Self.groupA], then: [Self.scopedPassword])
        #expect(added.status == 0 && added.stdout.contains("access groups: \(Self.groupA)"), "\(added.stdout)\(added.stderr)")
        let scoped = Self.scopedPassword + "\n"
        // Listed by the full password, by name; the full slot has no access groups.
        let listed = try sandbox.unlocked(["list-credentials", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let slots = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(slots.count == 2)
        #expect(slots.map { $0["accessGroups"] as? [String] } == [nil, [Self.groupA]])
        // The scoped password finds A's item, not B's: naming B is refused, not answered "not found".
        #expect(try sandbox.run(["find-generic-password", "-a", "a", "-w"], stdin: scoped).stdout == "secret of a\n")
        let named = try sandbox.run(["find-generic-password", "-a", "b", "--access-group", Self.groupB, "-w"], stdin: scoped)
        #expect(named.status == 30 && named.stdout.isEmpty, "\(named.stdout)\(named.stderr)")
        #expect(try sandbox.run(["find-generic-password", "-a", "b", "-w"], stdin: scoped).status == 44)
        // Adds: to A, yes; to B, or to the default group it does not reach, no.
        let toA = try sandbox.run(["add-generic-password", "-a", "a2", "-s", "svc", "--access-group", Self.groupA, "-w"], stdin: scoped + "x\n")
        #expect(toA.status == 0, "\(toA.stderr)")
        #expect(try sandbox.run(["add-generic-password", "-a", "b2", "-s", "svc", "--access-group", Self.groupB, "-w"], stdin: scoped + "x\n").status == 30)
        #expect(try sandbox.run(["add-generic-password", "-a", "d", "-s", "svc", "-w"], stdin: scoped + "x\n").status == 30)
        #expect(try sandbox.run(["delete-generic-password", "-a", "b", "--access-group", Self.groupB], stdin: scoped).status == 30)
        // A change of the whole keychain is refused too.
        #expect(try sandbox.run(["add-credential", "--insecure-iterations", "1000"], stdin: scoped + "another\nanother\n").status == 30)
        // The full password sees all three items, B's unchanged.
        #expect(try sandbox.unlocked(["find-generic-password", "-a", "b", "-w"]).stdout == "secret of b\n")
        #expect(try sandbox.unlocked(["find-generic-password", "-a", "a2", "-w"]).stdout == "x\n")
    }

    @Test("add-credential --groups on a version 2 keychain is refused, naming the format, and adds nothing")
    func versionTwoRefuses() throws {
        let sandbox = try KcfSandbox()
        try sandbox.createKeychain(formatVersion: 2)
        let before = try sandbox.keychainBytes()
        let added = try sandbox.unlocked(["add-credential", "--insecure-iterations", "1000", "--groups", "x"], then: [Self.scopedPassword])
        #expect(added.status == 206, "\(added.stdout)\(added.stderr)")
        #expect(try sandbox.keychainBytes() == before)
    }

    @Test("change-password: a full password of a version 3 keychain renews every key and the scoped password still opens; the scoped password is refused without --keep-keys, and with it changes its slot alone")
    func passwordChanges() throws {
        let (sandbox, keychain) = try Self.sandbox()
        try keychain.addCredential(
            .password(Self.scopedPassword), scope: .groups([Self.groupA]), keyDerivation: .pbkdf2(.insecureForTesting(1_000)))
        let scoped = Self.scopedPassword + "\n"
        // The full password, without --keep-keys: the scoped slot is granted the new keys, not a reason to refuse.
        let renewed = try sandbox.run(["change-password", "--insecure-iterations", "1000"], stdin: KcfSandbox.password + "\nrenewed full\n")
        #expect(renewed.status == 0, "\(renewed.stdout)\(renewed.stderr)")
        #expect(try sandbox.run(["find-generic-password", "-a", "b", "-w"], stdin: "renewed full\n").stdout == "secret of b\n")
        #expect(try sandbox.run(["find-generic-password", "-a", "a", "-w"], stdin: scoped).stdout == "secret of a\n")
        // The scoped password without --keep-keys: refused before the new password is read (none is given), the file
        // as it was.
        let before = try sandbox.keychainBytes()
        let refused = try sandbox.run(["change-password", "--insecure-iterations", "1000"], stdin: scoped)
        #expect(refused.status != 0 && refused.stderr.contains("reaches only some access groups") && refused.stderr.contains("--keep-keys"),
                "\(refused.stdout)\(refused.stderr)")
        #expect(try sandbox.keychainBytes() == before)
        // With --keep-keys: its slot alone; the old scoped password stops opening, the new one reaches A alone.
        let kept = try sandbox.run(["change-password", "--keep-keys", "--insecure-iterations", "1000"], stdin: scoped + "new scoped\n")
        #expect(kept.status == 0, "\(kept.stdout)\(kept.stderr)")
        #expect(try sandbox.run(["find-generic-password", "-a", "a", "-w"], stdin: scoped).status != 0)
        #expect(try sandbox.run(["find-generic-password", "-a", "a", "-w"], stdin: "new scoped\n").stdout == "secret of a\n")
        #expect(try sandbox.run(["find-generic-password", "-a", "b", "--access-group", Self.groupB, "-w"], stdin: "new scoped\n").status == 30)
        #expect(try sandbox.run(["find-generic-password", "-a", "b", "-w"], stdin: "renewed full\n").stdout == "secret of b\n")
    }

    @Test("compact with a scoped password rewrites its groups and keeps B's items, which the full password then finds")
    func scopedCompact() throws {
        let (sandbox, keychain) = try Self.sandbox()
        try keychain.addCredential(
            .password(Self.scopedPassword), scope: .groups([Self.groupA]), keyDerivation: .pbkdf2(.insecureForTesting(1_000)))
        for round in 0..<3 {
            try keychain.update(.genericPassword(service: "svc", account: "a"), setting: [:], secret: Array("a, round \(round)".utf8))
        }
        let compacted = try sandbox.run(["compact"], stdin: Self.scopedPassword + "\n")
        #expect(compacted.status == 0, "\(compacted.stdout)\(compacted.stderr)")
        #expect(try sandbox.unlocked(["find-generic-password", "-a", "b", "-w"]).stdout == "secret of b\n")
        #expect(try sandbox.unlocked(["find-generic-password", "-a", "a", "-w"]).stdout == "a, round 2\n")
        #expect(try sandbox.run(["find-generic-password", "-a", "a", "-w"], stdin: Self.scopedPassword + "\n").stdout == "a, round 2\n")
    }
}
