import Foundation
import Testing
import KeychainFile
import KeychainSecItem

@Suite("Certificates, keys and identities")
struct CertificateKeyIdentityTests {
    static let fixture = "rsa2048-ca-v3-ski"

    static func addCertificate(_ der: Data, label: String) -> OSStatus {
        SecItemAdd([
            kSecClass as String: kSecClassCertificate,
            kSecAttrLabel as String: label,
            kSecValueData as String: der,
        ] as CFDictionary, nil)
    }

    static func addPrivateKey(label applicationLabel: Data, tag: String, bytes: Data) -> OSStatus {
        SecItemAdd([
            kSecClass as String: kSecClassKey,
            kSecAttrKeyClass as String: kSecAttrKeyClassPrivate,
            kSecAttrKeyType as String: kSecAttrKeyTypeRSA,
            kSecAttrKeySizeInBits as String: 2048,
            kSecAttrApplicationLabel as String: applicationLabel,
            kSecAttrApplicationTag as String: tag.data(using: .utf8)!,
            kSecAttrCanSign as String: true,
            kSecAttrCanDecrypt as String: true,
            kSecAttrIsPermanent as String: true,
            kSecValueData as String: bytes,
        ] as CFDictionary, nil)
    }

    @Test("A certificate added from its DER gets the attributes the DER holds")
    func certificateFromDER() throws {
        let (der, facts) = try SecItemFixtures.certificate(Self.fixture)
        let file = try TemporaryKeychain()
        try file.run {
            #expect(Self.addCertificate(der, label: "Test Root") == errSecSuccess)
            #expect(Self.addCertificate(der, label: "Again") == errSecDuplicateItem)
            #expect(Self.addCertificate(Data([0x30, 0x03, 0x02, 0x01, 0x00]), label: "Broken") == errSecParam)

            var result: CFTypeRef?
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassCertificate,
                                         kSecAttrLabel as String: "Test Root",
                                         kSecReturnAttributes as String: true], &result) == errSecSuccess)
            let item = try #require(Returned.dictionary(result))
            #expect(item[kSecAttrIssuer as String] as? Data == Data(hex: facts.issuer_der))
            #expect(item[kSecAttrSubject as String] as? Data == Data(hex: facts.subject_der))
            #expect(item[kSecAttrSerialNumber as String] as? Data == Data(hex: facts.serial_content_octets))
            #expect(item[kSecAttrSubjectKeyID as String] as? Data == facts.subject_key_identifier.map { Data(hex: $0) })
            #expect(item[kSecAttrPublicKeyHash as String] as? Data == Data(hex: facts.public_key_hash))
            #expect(item[kSecAttrCertificateType as String] as? Int == facts.version)
            #expect(item[kSecAttrCertificateEncoding as String] as? Int == 3)

            // Found by issuer and serial number, its data is the DER.
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassCertificate,
                                         kSecAttrIssuer as String: Data(hex: facts.issuer_der),
                                         kSecAttrSerialNumber as String: Data(hex: facts.serial_content_octets),
                                         kSecReturnData as String: true], &result) == errSecSuccess)
            #expect(result as? Data == der)
        }
    }

    @Test("Key items keep their key attributes; a String application tag is its UTF-8 bytes")
    func keyItems() throws {
        let file = try TemporaryKeychain()
        try file.run {
            let keyBytes = Data((0..<32).map { UInt8($0) })
            #expect(Self.addPrivateKey(label: Data([1, 2, 3]), tag: "com.example.keys.signing", bytes: keyBytes) == errSecSuccess)
            var result: CFTypeRef?
            // Apple's keychain turns a String tag into its UTF-8 bytes; so does this one.
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassKey,
                                         kSecAttrApplicationTag as String: "com.example.keys.signing",
                                         kSecAttrKeyClass as String: kSecAttrKeyClassPrivate,
                                         kSecReturnAttributes as String: true, kSecReturnData as String: true],
                                        &result) == errSecSuccess)
            let item = try #require(Returned.dictionary(result))
            #expect(item[kSecClass as String] as? String == kSecClassKey)
            #expect(item[kSecAttrKeyClass as String] as? Int == 1)
            #expect(item[kSecAttrKeyType as String] as? Int == 42)
            #expect(item[kSecAttrKeySizeInBits as String] as? Int == 2048)
            #expect(item[kSecAttrApplicationLabel as String] as? Data == Data([1, 2, 3]))
            #expect(item[kSecAttrApplicationTag as String] as? Data == Data("com.example.keys.signing".utf8))
            #expect(item[kSecAttrCanSign as String] as? Bool == true)
            #expect(item[kSecAttrCanDecrypt as String] as? Bool == true)
            #expect(item[kSecAttrIsPermanent as String] as? Bool == true)
            #expect(item[kSecValueData as String] as? Data == keyBytes)
            // A public key query does not find the private key.
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassKey,
                                         kSecAttrKeyClass as String: kSecAttrKeyClassPublic], nil) == errSecItemNotFound)
        }
        let typed = try file.keychain.find(Key.self, matching: .key(keyClass: .privateKey))
        #expect(typed.first?.keyType == .rsa)
        #expect(typed.first?.applicationTag == Array("com.example.keys.signing".utf8))
    }

    @Test("A certificate and its private key are found as an identity, and deleted together")
    func identity() throws {
        let (der, facts) = try SecItemFixtures.certificate(Self.fixture)
        let file = try TemporaryKeychain()
        try file.run {
            let hash = Data(hex: facts.public_key_hash)
            #expect(Self.addCertificate(der, label: "Server") == errSecSuccess)
            var result: CFTypeRef?
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassIdentity, kSecReturnAttributes as String: true], &result)
                    == errSecItemNotFound)  // no private key yet
            #expect(Self.addPrivateKey(label: hash, tag: "server", bytes: Data([9, 9, 9])) == errSecSuccess)
            // A public key with the same label does not make a second identity.
            #expect(SecItemAdd([kSecClass as String: kSecClassKey, kSecAttrKeyClass as String: kSecAttrKeyClassPublic,
                                kSecAttrApplicationLabel as String: hash, kSecValueData as String: Data([7])], nil) == errSecSuccess)

            #expect(SecItemCopyMatching([kSecClass as String: kSecClassIdentity,
                                         kSecAttrLabel as String: "Server",
                                         kSecReturnAttributes as String: true, kSecReturnData as String: true,
                                         kSecReturnPersistentRef as String: true,
                                         kSecMatchLimit as String: kSecMatchLimitAll], &result) == errSecSuccess)
            let identities = try #require(Returned.dictionaries(result))
            #expect(identities.count == 1)
            let identity = try #require(identities.first)
            #expect(identity[kSecClass as String] as? String == kSecClassIdentity)
            #expect(identity[kSecAttrLabel as String] as? String == "Server")
            #expect(identity[kSecAttrPublicKeyHash as String] as? Data == hash)
            #expect(identity[kSecAttrKeyClass as String] as? Int == 1)  // the private key's
            #expect(identity[kSecAttrApplicationTag as String] as? Data == Data("server".utf8))
            #expect(identity[kSecValueData as String] as? Data == der)  // the certificate's

            // Its persistent reference is the certificate's.
            var certificateReference: CFTypeRef?
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassCertificate,
                                         kSecReturnPersistentRef as String: true], &certificateReference) == errSecSuccess)
            #expect(identity[kSecValuePersistentRef as String] as? Data == certificateReference as? Data)

            #expect(SecItemCopyMatching([kSecClass as String: kSecClassIdentity, kSecAttrLabel as String: "Other"], nil)
                    == errSecItemNotFound)
            #expect(SecItemDelete([kSecClass as String: kSecClassIdentity]) == errSecSuccess)
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassCertificate], nil) == errSecItemNotFound)
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassKey, kSecAttrKeyClass as String: kSecAttrKeyClassPrivate], nil)
                    == errSecItemNotFound)
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassKey], nil) == errSecSuccess)  // the public key stays
        }
    }
}
