import Foundation
import Testing
import KeychainFile
import KeychainSecItem

// The classic SecItem examples, ported nearly verbatim from code written against Apple's Security framework:
// only the `import` and the one-time keychain selection differ.

/// The usual "KeychainManager" of tutorials: saves (adds, or updates when the item exists), loads, updates
/// and deletes a generic password by service and account.
final class KeychainManager {
    let service: String

    init(service: String) {
        self.service = service
    }

    @discardableResult
    func save(_ password: String, for account: String) -> OSStatus {
        let data = password.data(using: .utf8)!
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecValueData as String: data,
        ]
        let status = SecItemAdd(query as CFDictionary, nil)
        if status == errSecDuplicateItem {
            return update(password, for: account)
        }
        return status
    }

    func load(account: String) -> String? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecReturnData as String: kCFBooleanTrue!,
            kSecMatchLimit as String: kSecMatchLimitOne,
        ]
        var dataTypeRef: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &dataTypeRef)
        guard status == errSecSuccess, let data = dataTypeRef as? Data else { return nil }
        return String(data: data, encoding: .utf8)
    }

    @discardableResult
    func update(_ password: String, for account: String) -> OSStatus {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        let attributes: [String: Any] = [kSecValueData as String: password.data(using: .utf8)!]
        return SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
    }

    @discardableResult
    func delete(account: String) -> OSStatus {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        return SecItemDelete(query as CFDictionary)
    }
}

/// The usual "device identifier" helper: a UUID created once and kept in the keychain.
enum DeviceIdentifier {
    static let service = "com.example.app.device"
    static let account = "deviceIdentifier"

    static func get() -> String? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecReturnData as String: true,
            kSecMatchLimit as String: kSecMatchLimitOne,
        ]
        var item: CFTypeRef?
        if SecItemCopyMatching(query as CFDictionary, &item) == errSecSuccess,
           let data = item as? Data, let identifier = String(data: data, encoding: .utf8) {
            return identifier
        }
        let identifier = UUID().uuidString
        let attributes: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            kSecValueData as String: Data(identifier.utf8),
        ]
        guard SecItemAdd(attributes as CFDictionary, nil) == errSecSuccess else { return nil }
        return identifier
    }
}

@Suite("Classic SecItem examples")
struct ClassicExampleTests {
    @Test("KeychainManager saves, loads, overwrites on a duplicate, updates and deletes a password")
    func keychainManager() throws {
        let file = try TemporaryKeychain()
        file.run {
            let manager = KeychainManager(service: "com.example.mail")
            #expect(manager.load(account: "ann") == nil)
            #expect(manager.save("first", for: "ann") == errSecSuccess)
            #expect(manager.load(account: "ann") == "first")
            // Saving again hits errSecDuplicateItem and falls back to an update.
            #expect(manager.save("second", for: "ann") == errSecSuccess)
            #expect(manager.load(account: "ann") == "second")
            #expect(manager.update("third", for: "ann") == errSecSuccess)
            #expect(manager.load(account: "ann") == "third")
            #expect(manager.save("bob's", for: "bob") == errSecSuccess)
            #expect(manager.delete(account: "ann") == errSecSuccess)
            #expect(manager.load(account: "ann") == nil)
            #expect(manager.delete(account: "ann") == errSecItemNotFound)
            #expect(manager.update("x", for: "ann") == errSecItemNotFound)
            #expect(manager.load(account: "bob") == "bob's")
        }
        // The items are ordinary typed items of the file.
        let passwords = try file.keychain.find(GenericPassword.self, matching: .genericPassword(service: "com.example.mail"))
        #expect(passwords.map(\.account) == ["bob"])
        #expect(passwords.first?.passwordString == "bob's")
    }

    @Test("A device identifier is created once and read back, also from the file reopened")
    func deviceIdentifier() throws {
        let file = try TemporaryKeychain()
        let first = try #require(file.run { DeviceIdentifier.get() })
        #expect(UUID(uuidString: first) != nil)
        #expect(file.run { DeviceIdentifier.get() } == first)
        let reopened = try file.reopened()
        #expect(SecItemKeychain(reopened).run { DeviceIdentifier.get() } == first)
        let stored = try reopened.find(GenericPassword.self, matching: .genericPassword(service: DeviceIdentifier.service))
        #expect(stored.count == 1)
        #expect(stored.first?.accessible == .afterFirstUnlockThisDeviceOnly)
    }
}
