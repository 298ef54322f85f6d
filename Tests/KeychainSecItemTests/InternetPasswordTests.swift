import Foundation
import Testing
import KeychainFile
import KeychainSecItem

@Suite("Internet passwords")
struct InternetPasswordTests {
    static var login: [String: Any] { [
        kSecClass as String: kSecClassInternetPassword,
        kSecAttrServer as String: "www.example.com",
        kSecAttrAccount as String: "ann@example.com",
        kSecAttrProtocol as String: kSecAttrProtocolHTTPS,
        kSecAttrPort as String: 443,
        kSecAttrPath as String: "/login",
        kSecAttrAuthenticationType as String: kSecAttrAuthenticationTypeHTMLForm,
        kSecAttrSecurityDomain as String: "Example Realm",
    ] }

    @Test("Server, protocol, port, path, authentication type and security domain are stored and matched")
    func storeAndFind() throws {
        let file = try TemporaryKeychain()
        try file.run {
            var attributes = Self.login
            attributes[kSecValueData as String] = Data("hunter2".utf8)
            #expect(SecItemAdd(attributes, nil) == errSecSuccess)

            var result: CFTypeRef?
            let query: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword,
                kSecAttrServer as String: "www.example.com",
                kSecAttrProtocol as String: kSecAttrProtocolHTTPS,
                kSecReturnAttributes as String: true,
                kSecReturnData as String: true,
            ]
            #expect(SecItemCopyMatching(query, &result) == errSecSuccess)
            let item = try #require(Returned.dictionary(result))
            #expect(item[kSecClass as String] as? String == kSecClassInternetPassword)
            #expect(item[kSecAttrProtocol as String] as? String == kSecAttrProtocolHTTPS)
            #expect(item[kSecAttrAuthenticationType as String] as? String == kSecAttrAuthenticationTypeHTMLForm)
            #expect(item[kSecAttrPort as String] as? Int == 443)
            #expect(item[kSecAttrPath as String] as? String == "/login")
            #expect(item[kSecAttrSecurityDomain as String] as? String == "Example Realm")
            #expect(item[kSecAttrAccount as String] as? String == "ann@example.com")
            #expect(item[kSecValueData as String] as? Data == Data("hunter2".utf8))

            let mismatches: [(String, Any)] = [
                (kSecAttrProtocol, kSecAttrProtocolHTTP), (kSecAttrPort, 8443), (kSecAttrPath, "/"),
                (kSecAttrAuthenticationType, kSecAttrAuthenticationTypeHTTPBasic),
            ]
            for (key, other) in mismatches {
                var mismatch = query
                mismatch[key] = other
                #expect(SecItemCopyMatching(mismatch, &result) == errSecItemNotFound, "\(key)")
            }
        }
        // The typed library sees an InternetPassword with Apple's codes.
        let typed = try file.keychain.find(InternetPassword.self, matching: .internetPassword(server: "www.example.com"))
        let password = try #require(typed.first)
        #expect(password.protocolType == .https)
        #expect(password.authenticationType == .htmlForm)
        #expect(password.port == 443)
        #expect(password.path == "/login")
    }

    @Test("Port and protocol are part of the primary key; numbers may come as strings, codes as numbers")
    func primaryKeyAndForms() throws {
        let file = try TemporaryKeychain()
        try file.run {
            var attributes = Self.login
            #expect(SecItemAdd(attributes, nil) == errSecSuccess)
            #expect(SecItemAdd(attributes, nil) == errSecDuplicateItem)
            attributes[kSecAttrPort as String] = "8443"  // a decimal string, as Apple's keychain accepts
            #expect(SecItemAdd(attributes, nil) == errSecSuccess)
            attributes[kSecAttrProtocol as String] = "xmpp"  // any four-character code
            #expect(SecItemAdd(attributes, nil) == errSecSuccess)
            attributes[kSecAttrProtocol as String] = NSNumber(value: 0x6674_7020)  // 'ftp ' as a number
            #expect(SecItemAdd(attributes, nil) == errSecSuccess)
            attributes[kSecAttrProtocol as String] = "toolong"
            #expect(SecItemAdd(attributes, nil) == errSecParam)
            attributes[kSecAttrProtocol as String] = kSecAttrProtocolSSH
            attributes[kSecAttrPort as String] = 70_000
            #expect(SecItemAdd(attributes, nil) == errSecParam)

            var result: CFTypeRef?
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassInternetPassword,
                                         kSecAttrServer as String: "www.example.com",
                                         kSecReturnAttributes as String: true,
                                         kSecMatchLimit as String: kSecMatchLimitAll], &result) == errSecSuccess)
            let items = try #require(Returned.dictionaries(result))
            #expect(items.map { "\($0[kSecAttrProtocol as String] ?? "-")/\($0[kSecAttrPort as String] ?? "-")" }
                    == ["htps/443", "htps/8443", "xmpp/8443", "ftp /8443"])
        }
    }

    @Test("kSecAttrSynchronizable: absent matches local items only, a Boolean its value, Any both")
    func synchronizable() throws {
        let file = try TemporaryKeychain()
        file.run {
            #expect(SecItemAdd(Self.login, nil) == errSecSuccess)
            var synced = Self.login
            synced[kSecAttrSynchronizable as String] = true
            // Same primary key otherwise: the synchronizable flag is part of it.
            #expect(SecItemAdd(synced, nil) == errSecSuccess)

            func count(_ sync: Any?) -> Int {
                var query: [String: Any] = [kSecClass as String: kSecClassInternetPassword,
                                            kSecReturnAttributes as String: true,
                                            kSecMatchLimit as String: kSecMatchLimitAll]
                query[kSecAttrSynchronizable as String] = sync
                var result: CFTypeRef?
                guard SecItemCopyMatching(query, &result) == errSecSuccess else { return 0 }
                return Returned.dictionaries(result)?.count ?? -1
            }
            #expect(count(nil) == 1)
            #expect(count(false) == 1)
            #expect(count(true) == 1)
            #expect(count(kSecAttrSynchronizableAny) == 2)

            #expect(SecItemDelete([kSecClass as String: kSecClassInternetPassword]) == errSecSuccess)
            #expect(count(kSecAttrSynchronizableAny) == 1)
            #expect(SecItemDelete([kSecClass as String: kSecClassInternetPassword,
                                   kSecAttrSynchronizable as String: kSecAttrSynchronizableAny]) == errSecSuccess)
            #expect(count(kSecAttrSynchronizableAny) == 0)
        }
    }
}
