import Foundation
import Testing
@testable import KeychainFile

/// kcf says when a key slot is near its grant limit (format version 3, Docs/FormatVersion3.md §2.2): on stderr at
/// every open, and on the slot's line of `list-credentials` (its JSON has every slot's grant count).
@Suite("kcf warns of a key slot near its grant limit (format version 3)")
struct GrantLimitCommandTests {
    /// A version 3 keychain whose scoped slot holds `grants` grants: one group added for each by the full password.
    static func sandbox(grants: Int) throws -> KcfSandbox {
        let (sandbox, keychain) = try ScopedCredentialCommandTests.sandbox(items: [])
        try keychain.addCredential(
            .password(ScopedCredentialCommandTests.scopedPassword), scope: .groups([""]), keyDerivation: .pbkdf2(.insecureForTesting(1_000)))
        for number in 0..<grants {
            try keychain.add(GenericPassword(service: "svc", account: "g\(number)", password: "s", accessGroup: "com.example.g\(number)"))
        }
        return sandbox
    }

    @Test("24 grants: every open warns on stderr naming the slot, list-credentials says it on the slot's line, and the command succeeds")
    func warnsAt24() throws {
        let sandbox = try Self.sandbox(grants: 24)
        let listed = try sandbox.unlocked(["list-credentials"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let lines = listed.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 2)
        let scopedID = String(lines[1].prefix(32))
        #expect(lines[1].hasSuffix("; 24 grants, room for 8 more: compact the keychain with this slot's own credential soon, or remove the slot; once it is full, key rotations and added groups are refused"))
        #expect(!lines[0].contains("grants"))
        #expect(listed.stderr.contains("kcf: list-credentials: warning: key slot \(scopedID) holds 24 grants, room for 8 more"))
        // Any command that opens the keychain says it, and does its work.
        let found = try sandbox.unlocked(["find-generic-password", "-a", "g3", "-w"])
        #expect(found.status == 0 && found.stdout == "s\n", "\(found.stderr)")
        #expect(found.stderr.contains("kcf: find-generic-password: warning: key slot \(scopedID) holds 24 grants, room for 8 more"))
        let json = try sandbox.unlocked(["list-credentials", "--json"])
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(objects.compactMap { $0["grants"] as? Int } == [0, 24])
        #expect(objects.compactMap { $0["grantsLeft"] as? Int } == [32, 8])
    }

    @Test("23 grants: no warning")
    func quietAt23() throws {
        let sandbox = try Self.sandbox(grants: 23)
        let listed = try sandbox.unlocked(["list-credentials"])
        #expect(listed.status == 0 && listed.stderr.isEmpty, "\(listed.stderr)")
        #expect(!listed.stdout.contains("grants"))
    }
}
