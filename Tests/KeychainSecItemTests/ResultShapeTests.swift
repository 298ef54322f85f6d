import Foundation
import Testing
import KeychainFile
import KeychainSecItem

/// The shapes of results, by Apple's rules: one object with kSecMatchLimitOne (the default), an array
/// otherwise; Data for data or persistent reference alone, dictionaries for anything more.
@Suite("Result shapes")
struct ResultShapeTests {
    static let service = "com.example.shapes"

    /// A keychain holding three passwords of one service, added in the order ann, bob, cat.
    static func populated() throws -> TemporaryKeychain {
        let file = try TemporaryKeychain()
        try file.run {
            for account in ["ann", "bob", "cat"] {
                let status = SecItemAdd([
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: service,
                    kSecAttrAccount as String: account,
                    kSecAttrLabel as String: "\(account)'s password",
                    kSecValueData as String: Data("secret-\(account)".utf8),
                ], nil)
                try #require(status == errSecSuccess)
            }
        }
        return file
    }

    /// Runs SecItemCopyMatching for the service with the given extra keys.
    static func copy(_ extra: [String: Any]) -> (OSStatus, AnyObject?) {
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
        query.merge(extra) { $1 }
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query, &result)
        return (status, result)
    }

    @Test("Data alone: one Data with limit one (the default), an array of Data with limit all or a count")
    func dataAlone() throws {
        let file = try Self.populated()
        try file.run {
            let (status, one) = Self.copy([kSecReturnData as String: true, kSecAttrAccount as String: "bob"])
            #expect(status == errSecSuccess)
            #expect(one as? Data == Data("secret-bob".utf8))

            let (_, first) = Self.copy([kSecReturnData as String: true])
            #expect(first as? Data == Data("secret-ann".utf8))  // default limit one, first added first

            let (_, all) = Self.copy([kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitAll])
            let list = try #require(all as? [Data])
            #expect(list.map { String(decoding: $0, as: UTF8.self) } == ["secret-ann", "secret-bob", "secret-cat"])

            let (_, two) = Self.copy([kSecReturnData as String: true, kSecMatchLimit as String: 2])
            #expect((two as? [Data])?.count == 2)

            let (_, single) = Self.copy([kSecReturnData as String: true, kSecMatchLimit as String: 1])
            #expect(single as? Data == Data("secret-ann".utf8))
        }
    }

    @Test("A persistent reference alone is Data; it finds the same item again")
    func persistentReferenceAlone() throws {
        let file = try Self.populated()
        try file.run {
            let (status, reference) = Self.copy([kSecReturnPersistentRef as String: true, kSecAttrAccount as String: "cat"])
            #expect(status == errSecSuccess)
            let bytes = try #require(reference as? Data)
            #expect(bytes.count == 21)
            #expect(bytes.prefix(4) == Data("KCFR".utf8))
            var item: CFTypeRef?
            #expect(SecItemCopyMatching([kSecValuePersistentRef as String: bytes, kSecReturnData as String: true], &item) == errSecSuccess)
            #expect(item as? Data == Data("secret-cat".utf8))
        }
    }

    @Test("Attributes alone: a dictionary with kSecClass and every attribute, without the secret")
    func attributesAlone() throws {
        let file = try Self.populated()
        try file.run {
            let (status, result) = Self.copy([kSecReturnAttributes as String: true, kSecAttrAccount as String: "ann"])
            #expect(status == errSecSuccess)
            let item = try #require(Returned.dictionary(result))
            #expect(item[kSecClass as String] as? String == kSecClassGenericPassword)
            #expect(item[kSecAttrService as String] as? String == Self.service)
            #expect(item[kSecAttrAccount as String] as? String == "ann")
            #expect(item[kSecAttrLabel as String] as? String == "ann's password")
            #expect(item[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenUnlocked)
            #expect(item[kSecAttrAccessGroup as String] as? String == "")
            #expect(item[kSecAttrSynchronizable as String] as? Bool == false)
            let created = try #require(item[kSecAttrCreationDate as String] as? Date)
            #expect(abs(created.timeIntervalSinceNow) < 600)
            #expect(item[kSecAttrModificationDate as String] is Date)
            #expect(item[kSecValueData as String] == nil)
            #expect(item[kSecValuePersistentRef as String] == nil)
        }
    }

    @Test("Several return keys: dictionaries holding exactly what was asked for")
    func combinations() throws {
        let file = try Self.populated()
        try file.run {
            let (_, both) = Self.copy([kSecReturnAttributes as String: true, kSecReturnData as String: true,
                                       kSecAttrAccount as String: "bob"])
            let item = try #require(Returned.dictionary(both))
            #expect(item[kSecValueData as String] as? Data == Data("secret-bob".utf8))
            #expect(item[kSecAttrAccount as String] as? String == "bob")
            #expect(item[kSecValuePersistentRef as String] == nil)

            let (_, dataAndReference) = Self.copy([kSecReturnData as String: true, kSecReturnPersistentRef as String: true,
                                                   kSecAttrAccount as String: "bob"])
            let pair = try #require(Returned.dictionary(dataAndReference))
            #expect(Set(pair.keys) == [kSecClass as String, kSecValueData as String, kSecValuePersistentRef as String])
            #expect((pair[kSecValuePersistentRef as String] as? Data)?.count == 21)

            let (_, everything) = Self.copy([kSecReturnData as String: true, kSecReturnPersistentRef as String: true,
                                             kSecReturnAttributes as String: true,
                                             kSecMatchLimit as String: kSecMatchLimitAll])
            let items = try #require(Returned.dictionaries(everything))
            #expect(items.map { $0[kSecAttrAccount as String] as? String } == ["ann", "bob", "cat"])
            #expect(items.allSatisfy { $0[kSecValueData as String] is Data && $0[kSecValuePersistentRef as String] is Data })
            // Each item's reference leads back to it.
            for entry in items {
                var found: CFTypeRef?
                let reference = try #require(entry[kSecValuePersistentRef as String] as? Data)
                #expect(SecItemCopyMatching([kSecValuePersistentRef as String: reference,
                                             kSecReturnAttributes as String: true], &found) == errSecSuccess)
                #expect(Returned.dictionary(found)?[kSecAttrAccount as String] as? String
                        == entry[kSecAttrAccount as String] as? String)
            }

            // kSecReturnX set to false asks for nothing.
            let (_, falseKeys) = Self.copy([kSecReturnData as String: true, kSecReturnAttributes as String: false,
                                            kSecAttrAccount as String: "cat"])
            #expect(falseKeys as? Data == Data("secret-cat".utf8))
        }
    }

    @Test("Without return keys the call only checks existence and returns nothing")
    func existenceCheck() throws {
        let file = try Self.populated()
        file.run {
            let (status, result) = Self.copy([kSecAttrAccount as String: "ann"])
            #expect(status == errSecSuccess)
            #expect(result == nil)
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "ann"], nil) == errSecSuccess)
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "zed"], nil) == errSecItemNotFound)
        }
    }

    @Test("No match is errSecItemNotFound for every limit, and the result is left nil")
    func noMatch() throws {
        let file = try Self.populated()
        file.run {
            for limit in [kSecMatchLimitOne, kSecMatchLimitAll] {
                var result: CFTypeRef? = NSData()
                let status = SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword,
                                                  kSecAttrService as String: "nothing here",
                                                  kSecReturnData as String: true, kSecMatchLimit as String: limit], &result)
                #expect(status == errSecItemNotFound)
                #expect(result == nil)
            }
        }
    }

    @Test("SecItemAdd returns the added item in the same shapes")
    func addReturnsTheItem() throws {
        let file = try TemporaryKeychain()
        try file.run {
            func add(_ account: String, _ returns: [String: Any]) -> (OSStatus, AnyObject?) {
                var attributes: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                                 kSecAttrAccount as String: account,
                                                 kSecValueData as String: Data(account.utf8)]
                attributes.merge(returns) { $1 }
                var result: CFTypeRef?
                return (SecItemAdd(attributes, &result), result)
            }
            let (status, attributes) = add("a", [kSecReturnAttributes as String: true])
            #expect(status == errSecSuccess)
            let item = try #require(Returned.dictionary(attributes))
            #expect(item[kSecAttrAccount as String] as? String == "a")
            #expect(item[kSecClass as String] as? String == kSecClassGenericPassword)
            #expect(item[kSecAttrCreationDate as String] is Date)

            #expect(add("b", [kSecReturnData as String: true]).1 as? Data == Data("b".utf8))
            let reference = try #require(add("c", [kSecReturnPersistentRef as String: true]).1 as? Data)
            var found: CFTypeRef?
            #expect(SecItemCopyMatching([kSecValuePersistentRef as String: reference, kSecReturnData as String: true], &found) == errSecSuccess)
            #expect(found as? Data == Data("c".utf8))
            // A result pointer without return keys stays nil.
            #expect(add("d", [:]).0 == errSecSuccess)
            #expect(add("e", [:]).1 == nil)
        }
    }
}
