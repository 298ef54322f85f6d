import Foundation
import Testing
import KeychainFile
@testable import KeychainSecItem

/// Two "programs" sharing one keychain file, as two apps of one team share items through a common access
/// group: each program's code only knows its own access groups, the first being its default.
@Suite("Access groups")
struct AccessGroupTests {
    static let shared = "TEAMID.com.example.shared"
    static let mailGroup = "TEAMID.com.example.mail"
    static let calendarGroup = "TEAMID.com.example.calendar"

    /// What either program runs: store a private token (default access group) and a shared one.
    static func storeTokens(program: String) -> [OSStatus] {
        let privateToken: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: "token",
            kSecAttrAccount as String: program,
            kSecValueData as String: Data("\(program)-private".utf8),
        ]
        let sharedToken: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: "token",
            kSecAttrAccount as String: program,
            kSecAttrAccessGroup as String: shared,
            kSecValueData as String: Data("\(program)-shared".utf8),
        ]
        return [SecItemAdd(privateToken as CFDictionary, nil), SecItemAdd(sharedToken as CFDictionary, nil)]
    }

    /// What either program runs: list the tokens it can see, as (account, access group, secret).
    static func visibleTokens() -> [String] {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: "token",
            kSecReturnAttributes as String: true,
            kSecReturnData as String: true,
            kSecMatchLimit as String: kSecMatchLimitAll,
        ]
        var result: CFTypeRef?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess,
              let items = result as? [[String: Any]] else { return [] }
        return items.map { item in
            let secret = (item[kSecValueData as String] as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "?"
            return "\(item[kSecAttrAccount as String] as? String ?? "?")|\(item[kSecAttrAccessGroup as String] as? String ?? "?")|\(secret)"
        }.sorted()
    }

    @Test("Each program sees the shared items and its own, never the other's private ones")
    func sharingThroughACommonGroup() throws {
        let file = try TemporaryKeychain()
        let mail = SecItemKeychain(file.keychain, accessGroups: [Self.mailGroup, Self.shared])
        let calendar = SecItemKeychain(file.keychain, accessGroups: [Self.calendarGroup, Self.shared])

        #expect(mail.run { Self.storeTokens(program: "mail") } == [errSecSuccess, errSecSuccess])
        #expect(calendar.run { Self.storeTokens(program: "calendar") } == [errSecSuccess, errSecSuccess])

        #expect(mail.run { Self.visibleTokens() } == [
            "calendar|\(Self.shared)|calendar-shared",
            "mail|\(Self.mailGroup)|mail-private",
            "mail|\(Self.shared)|mail-shared",
        ])
        #expect(calendar.run { Self.visibleTokens() } == [
            "calendar|\(Self.calendarGroup)|calendar-private",
            "calendar|\(Self.shared)|calendar-shared",
            "mail|\(Self.shared)|mail-shared",
        ])
        // All four are in the one file.
        #expect(try file.keychain.search(.genericPassword(service: "token")).count == 4)
    }

    @Test("Naming another program's access group is refused; its items cannot be read, changed or deleted")
    func foreignGroupsAreRefused() throws {
        let file = try TemporaryKeychain()
        let mail = SecItemKeychain(file.keychain, accessGroups: [Self.mailGroup, Self.shared])
        let calendar = SecItemKeychain(file.keychain, accessGroups: [Self.calendarGroup, Self.shared])
        _ = calendar.run { Self.storeTokens(program: "calendar") }

        let foreign: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrAccessGroup as String: Self.calendarGroup,
        ]
        mail.run {
            var item: CFTypeRef?
            var reading = foreign
            reading[kSecReturnData as String] = true
            #expect(SecItemCopyMatching(reading, &item) == errSecMissingEntitlement)
            #expect(SecItemDelete(foreign) == errSecMissingEntitlement)
            #expect(SecItemUpdate(foreign, [kSecAttrLabel as String: "x"]) == errSecMissingEntitlement)
            var adding = foreign
            adding[kSecAttrAccount as String] = "intruder"
            #expect(SecItemAdd(adding, nil) == errSecMissingEntitlement)
            // Moving an own item into a foreign group is refused too.
            #expect(SecItemUpdate([kSecClass as String: kSecClassGenericPassword],
                                  [kSecAttrAccessGroup as String: Self.calendarGroup]) == errSecMissingEntitlement)

            // Without naming a group, the calendar's private token is simply not there.
            let privateToken: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "calendar",
            ]
            #expect(SecItemUpdate(privateToken, [kSecAttrLabel as String: "seen by mail"]) == errSecSuccess)  // the shared one
            #expect(SecItemDelete(privateToken) == errSecSuccess)  // the shared one
            #expect(SecItemDelete(privateToken) == errSecItemNotFound)
        }
        #expect(calendar.run { Self.visibleTokens() } == ["calendar|\(Self.calendarGroup)|calendar-private"])
        let remaining = try file.keychain.find(GenericPassword.self, matching: .genericPassword(service: "token"))
        #expect(remaining.map(\.accessGroup) == [Self.calendarGroup])
        #expect(remaining.first?.label == nil)
    }

    @Test("A program with one access group searches it directly; without groups every item is visible")
    func singleAndUnrestrictedGroups() throws {
        let file = try TemporaryKeychain()
        let only = SecItemKeychain(file.keychain, accessGroups: ["TEAMID.only"])
        // The private token goes to its only group; the shared group is not its own.
        #expect(only.run { Self.storeTokens(program: "only") } == [errSecSuccess, errSecMissingEntitlement])
        #expect(only.run { Self.visibleTokens() } == ["only|TEAMID.only|only-private"])
        // Unrestricted: items without a group go to the empty group, and everything is visible.
        let all = SecItemKeychain(file.keychain)
        #expect(all.run { Self.storeTokens(program: "tool") } == [errSecSuccess, errSecSuccess])
        #expect(all.run { Self.visibleTokens() } == [
            "only|TEAMID.only|only-private", "tool|\(Self.shared)|tool-shared", "tool||tool-private",
        ])
        // An empty list of groups means no entitlement at all.
        let none = SecItemKeychain(file.keychain, accessGroups: [])
        #expect(none.run { SecItemDelete([kSecClass as String: kSecClassGenericPassword]) } == errSecMissingEntitlement)
        #expect(none.run { Self.storeTokens(program: "none") } == [errSecMissingEntitlement, errSecMissingEntitlement])
    }
}
