import Foundation
import Testing
@testable import KeychainFile
@testable import KeychainSecItem

/// The access-group scenario of ``AccessGroupTests`` held by cryptography instead of trust (Docs/FormatVersion3.md
/// §2.3): each program opens the one file with its own credential, scoped to its private group and the shared one,
/// and so holds no key of the other's private group. The SecItem layer takes the keychain's scope as the program's
/// access groups when it is given none.
@Suite("Access groups held apart by scoped credentials (format version 3)")
struct ScopedCredentialTests {
    static let mailPassword = "mail program"
    static let calendarPassword = "calendar program"

    /// A version 3 file whose full holder made the three groups (a seed item in each, mail's first) and added a
    /// credential for each program; the programs' keychains, each opened with its own credential.
    static func programs(in directory: String) throws -> (full: Keychain, mail: Keychain, calendar: Keychain) {
        let path = directory + "/shared.kcf"
        var options = Keychain.CreationOptions(passwordIterations: .insecureForTesting(1_000))
        options.formatVersion = 3
        let full = try Keychain.create(at: path, credential: TemporaryKeychain.credential, options: options)
        for group in [AccessGroupTests.mailGroup, AccessGroupTests.calendarGroup, AccessGroupTests.shared] {
            try full.add(GenericPassword(service: "seed", account: group, password: "seed", accessGroup: group))
        }
        let cheap = PasswordKeyDerivation.pbkdf2(.insecureForTesting(1_000))
        try full.addCredential(.password(mailPassword), scope: .groups([AccessGroupTests.mailGroup, AccessGroupTests.shared]), keyDerivation: cheap)
        try full.addCredential(
            .password(calendarPassword), scope: .groups([AccessGroupTests.calendarGroup, AccessGroupTests.shared]), keyDerivation: cheap)
        return (full, try Keychain.open(at: path, credential: .password(mailPassword)),
                try Keychain.open(at: path, credential: .password(calendarPassword)))
    }

    @Test("Each program sees the shared items and its own, never the other's, and gets errSecMissingEntitlement naming the other's group")
    func twoProgramsOneFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kcf-scoped-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (full, mailKeychain, calendarKeychain) = try Self.programs(in: directory)
        #expect(mailKeychain.scope == .groups([AccessGroupTests.mailGroup, AccessGroupTests.shared]))
        let mail = SecItemKeychain(mailKeychain)
        let calendar = SecItemKeychain(calendarKeychain)

        #expect(mail.run { AccessGroupTests.storeTokens(program: "mail") } == [errSecSuccess, errSecSuccess])
        #expect(calendar.run { AccessGroupTests.storeTokens(program: "calendar") } == [errSecSuccess, errSecSuccess])
        #expect(mail.run { AccessGroupTests.visibleTokens() } == [
            "calendar|\(AccessGroupTests.shared)|calendar-shared",
            "mail|\(AccessGroupTests.mailGroup)|mail-private",
            "mail|\(AccessGroupTests.shared)|mail-shared",
        ])
        #expect(calendar.run { AccessGroupTests.visibleTokens() } == [
            "calendar|\(AccessGroupTests.calendarGroup)|calendar-private",
            "calendar|\(AccessGroupTests.shared)|calendar-shared",
            "mail|\(AccessGroupTests.shared)|mail-shared",
        ])
        // All four tokens are in the one file, which the full credential opens whole.
        #expect(try full.search(.genericPassword(service: "token")).count == 4)
        // The mail program holds no key of the calendar's private group: its keychain follows two groups, not three.
        let followed = try #require(mailKeychain.withLock { mailKeychain.log as? RecordLogV3 }).state.groups.names.values.sorted()
        #expect(followed == [AccessGroupTests.mailGroup, AccessGroupTests.shared].sorted())

        let foreign: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccessGroup as String: AccessGroupTests.calendarGroup]
        mail.run {
            var item: CFTypeRef?
            var reading = foreign
            reading[kSecReturnData as String] = true
            #expect(SecItemCopyMatching(reading as CFDictionary, &item) == errSecMissingEntitlement)
            #expect(SecItemDelete(foreign as CFDictionary) == errSecMissingEntitlement)
            #expect(SecItemUpdate(foreign as CFDictionary, [kSecAttrLabel as String: "x"] as CFDictionary) == errSecMissingEntitlement)
            var adding = foreign
            adding[kSecAttrAccount as String] = "intruder"
            #expect(SecItemAdd(adding as CFDictionary, nil) == errSecMissingEntitlement)
            #expect(SecItemUpdate([kSecClass as String: kSecClassGenericPassword] as CFDictionary,
                                  [kSecAttrAccessGroup as String: AccessGroupTests.calendarGroup] as CFDictionary) == errSecMissingEntitlement)
        }
        // A program that names a group its credential does not reach gets the same answer from the keychain itself.
        let overreaching = SecItemKeychain(mailKeychain, accessGroups: [AccessGroupTests.calendarGroup])
        #expect(overreaching.run { AccessGroupTests.storeTokens(program: "overreach") } == [errSecMissingEntitlement, errSecMissingEntitlement])
        #expect(calendar.run { AccessGroupTests.visibleTokens() }.count == 3)
    }
}
