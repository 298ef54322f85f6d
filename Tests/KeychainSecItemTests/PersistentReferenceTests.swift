import Foundation
import Testing
import KeychainFile
import KeychainSecItem

@Suite("Persistent references")
struct PersistentReferenceTests {
    /// Adds a generic password and returns its persistent reference.
    static func addReturningReference(account: String, secret: String) throws -> Data {
        var reference: CFTypeRef?
        let status = SecItemAdd([
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: "com.example.refs",
            kSecAttrAccount as String: account,
            kSecValueData as String: Data(secret.utf8),
            kSecReturnPersistentRef as String: true,
        ], &reference)
        try #require(status == errSecSuccess)
        return try #require(reference as? Data)
    }

    static func secret(at reference: Data, extra: [String: Any] = [:]) -> (OSStatus, String?) {
        var query: [String: Any] = [kSecValuePersistentRef as String: reference, kSecReturnData as String: true]
        query.merge(extra) { $1 }
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query, &result)
        return (status, (result as? Data).map { String(decoding: $0, as: UTF8.self) })
    }

    @Test("A reference finds its item with or without kSecClass, survives reopening, and updates and deletes it")
    func roundTrip() throws {
        let file = try TemporaryKeychain()
        let reference = try file.run { () throws -> Data in
            let ann = try Self.addReturningReference(account: "ann", secret: "one")
            _ = try Self.addReturningReference(account: "bob", secret: "two")
            #expect(Self.secret(at: ann).1 == "one")
            #expect(Self.secret(at: ann, extra: [kSecClass as String: kSecClassGenericPassword]).1 == "one")
            #expect(Self.secret(at: ann, extra: [kSecClass as String: kSecClassInternetPassword]).0 == errSecItemNotFound)
            // A reference and attributes must agree.
            #expect(Self.secret(at: ann, extra: [kSecClass as String: kSecClassGenericPassword,
                                                 kSecAttrAccount as String: "bob"]).0 == errSecItemNotFound)
            #expect(SecItemUpdate([kSecValuePersistentRef as String: ann], [kSecValueData as String: Data("uno".utf8)]) == errSecSuccess)
            #expect(Self.secret(at: ann).1 == "uno")
            return ann
        }
        // Another opening of the file (another process) resolves the same reference.
        let reopened = try file.reopened()
        SecItemKeychain(reopened).run {
            #expect(Self.secret(at: reference).1 == "uno")
            #expect(SecItemDelete([kSecValuePersistentRef as String: reference]) == errSecSuccess)
            #expect(Self.secret(at: reference).0 == errSecItemNotFound)
            #expect(SecItemDelete([kSecValuePersistentRef as String: reference]) == errSecItemNotFound)
        }
        let left = try file.keychain.find(GenericPassword.self, matching: .genericPassword(service: "com.example.refs"))
        #expect(left.map(\.account) == ["bob"])
    }

    @Test("Bytes that are not a reference are refused; a query without class or reference is refused")
    func invalidReferences() throws {
        let file = try TemporaryKeychain()
        file.run {
            #expect(Self.secret(at: Data([1, 2, 3])).0 == errSecParam)
            #expect(Self.secret(at: Data(count: 21)).0 == errSecParam)
            #expect(SecItemCopyMatching([kSecValuePersistentRef as String: "KCFR"], nil) == errSecParam)
            #expect(SecItemCopyMatching([kSecAttrAccount as String: "ann"], nil) == errSecParam)
            var unknown = Data("KCFR".utf8)
            unknown.append(contentsOf: [1] + [UInt8](repeating: 0xAB, count: 16))
            #expect(Self.secret(at: unknown).0 == errSecItemNotFound)
        }
    }
}
