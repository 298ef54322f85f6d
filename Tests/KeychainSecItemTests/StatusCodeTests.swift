import Foundation
import Testing
import KeychainFile
import KeychainSecItem

/// Parameter errors and other statuses: every mistake is a status, never a crash.
@Suite("Status codes")
struct StatusCodeTests {
    static var password: [String: Any] { [
        kSecClass as String: kSecClassGenericPassword,
        kSecAttrService as String: "com.example.codes",
        kSecAttrAccount as String: "ann",
    ] }

    static func with(_ extra: [String: Any], base: [String: Any] = password) -> [String: Any] {
        base.merging(extra) { $1 }
    }

    @Test("The codes have Apple's values, and the library's errors carry the same ones")
    func values() {
        #expect([errSecSuccess, errSecUnimplemented, errSecIO, errSecParam, errSecAllocate, errSecAuthFailed,
                 errSecNoSuchKeychain, errSecDuplicateItem, errSecItemNotFound, errSecNoSuchAttr, errSecNoSuchClass,
                 errSecInteractionNotAllowed, errSecDecode, errSecMissingEntitlement, errSecVerifyFailed]
                == [0, -4, -36, -50, -108, -25293, -25294, -25299, -25300, -25303, -25306, -25308, -26275, -34018, -67808])
        #expect(KeychainError.duplicateItem.code == errSecDuplicateItem)
        #expect(KeychainError.itemNotFound.code == errSecItemNotFound)
        #expect(KeychainError.invalidParameter("x").code == errSecParam)
        #expect(KeychainError.wrongCredentials.code == errSecAuthFailed)
        #expect(KeychainError.notAKeychain.code == errSecDecode)
        #expect(KeychainError.io(operation: "read", errno: 5, path: "/x").code == errSecIO)
        #expect(KeychainError.limitReached("x").code == errSecAllocate)
        #expect(KeychainError.unsupportedVersion(9).code == errSecUnimplemented)
        #expect(KeychainError.unsupportedFeature(offset: 40, reason: "key id 1").code == errSecUnimplemented)
    }

    @Test("SecCopyErrorMessageString describes the codes")
    func messages() {
        #expect(SecCopyErrorMessageString(errSecItemNotFound, nil) == "The specified item could not be found in the keychain.")
        #expect(SecCopyErrorMessageString(errSecDuplicateItem, nil) == "The specified item already exists in the keychain.")
        #expect(SecCopyErrorMessageString(errSecParam, nil) == "One or more parameters passed to a function were not valid.")
        #expect(SecCopyErrorMessageString(12_345, nil) == "OSStatus 12345")
    }

    @Test("Unknown keys, wrong value types and missing or unknown classes are refused")
    func parameterErrors() throws {
        let file = try TemporaryKeychain()
        file.run {
            let cases: [(String, [String: Any], OSStatus)] = [
                ("unknown key", Self.with(["colour": "blue"]), errSecParam),
                ("account is a number", Self.with([kSecAttrAccount as String: 42]), errSecParam),
                ("account is an array", Self.with([kSecAttrAccount as String: ["a"]]), errSecParam),
                ("account is nil", Self.with([kSecAttrAccount as String: Optional<String>.none as Any]), errSecParam),
                ("generic is a date", Self.with([kSecAttrGeneric as String: Date()]), errSecParam),
                ("invisible is 2", Self.with([kSecAttrIsInvisible as String: 2]), errSecParam),
                ("invisible is a string", Self.with([kSecAttrIsInvisible as String: "1"]), errSecParam),
                ("accessible is unknown", Self.with([kSecAttrAccessible as String: "zz"]), errSecParam),
                ("data is a string", Self.with([kSecValueData as String: "secret"]), errSecParam),
                ("creation date is set", Self.with([kSecAttrCreationDate as String: Date()]), errSecParam),
                ("synchronizable any", Self.with([kSecAttrSynchronizable as String: kSecAttrSynchronizableAny]), errSecParam),
                ("synchronizable is a string", Self.with([kSecAttrSynchronizable as String: "yes"]), errSecParam),
                ("persistent reference", Self.with([kSecValuePersistentRef as String: Data(count: 21)]), errSecParam),
                ("return data is a string", Self.with([kSecReturnData as String: "yes"]), errSecParam),
                ("no class", [kSecAttrAccount as String: "ann"], errSecParam),
                ("class is a number", Self.with([kSecClass as String: 1]), errSecParam),
                ("unknown class", Self.with([kSecClass as String: "apls"]), errSecNoSuchClass),
                ("server in a generic password", Self.with([kSecAttrServer as String: "example.com"]), errSecNoSuchAttr),
                ("service in a key", [kSecClass as String: kSecClassKey, kSecAttrService as String: "x"], errSecNoSuchAttr),
                ("value reference", Self.with([kSecValueRef as String: NSObject()]), errSecUnimplemented),
                ("return reference", Self.with([kSecReturnRef as String: true]), errSecUnimplemented),
                ("identity", [kSecClass as String: kSecClassIdentity, kSecAttrLabel as String: "x"], errSecUnimplemented),
            ]
            for (name, attributes, expected) in cases {
                #expect(SecItemAdd(attributes, nil) == expected, "\(name)")
            }
            #expect(file.keychain.count == 0)
        }
    }

    @Test("Queries refuse what their operation cannot do")
    func operationRules() throws {
        let file = try TemporaryKeychain()
        file.run {
            #expect(SecItemAdd(Self.with([kSecValueData as String: Data("1".utf8)]), nil) == errSecSuccess)
            #expect(SecItemAdd(Self.with([kSecValueData as String: Data("2".utf8)]), nil) == errSecDuplicateItem)
            // Return keys need a result pointer.
            #expect(SecItemCopyMatching(Self.with([kSecReturnData as String: true]), nil) == errSecParam)
            #expect(SecItemCopyMatching(Self.with([kSecMatchLimit as String: "m_LimitSome"]), nil) == errSecParam)
            #expect(SecItemCopyMatching(Self.with([kSecMatchLimit as String: 0]), nil) == errSecParam)
            #expect(SecItemCopyMatching(Self.with([kSecReturnRef as String: false]), nil) == errSecSuccess)
            // Update returns nothing and changes every match.
            let change: [String: Any] = [kSecAttrLabel as String: "changed"]
            #expect(SecItemUpdate(Self.with([kSecReturnData as String: true]), change) == errSecParam)
            #expect(SecItemUpdate(Self.with([kSecMatchLimit as String: kSecMatchLimitOne]), change) == errSecParam)
            #expect(SecItemUpdate(Self.password, [kSecClass as String: kSecClassGenericPassword]) == errSecParam)
            #expect(SecItemUpdate(Self.password, [kSecAttrServer as String: "x"]) == errSecNoSuchAttr)
            #expect(SecItemUpdate(Self.password, [kSecAttrCreationDate as String: Date()]) == errSecParam)
            #expect(SecItemUpdate(Self.with([kSecMatchLimit as String: kSecMatchLimitAll]), change) == errSecSuccess)
            #expect(SecItemUpdate(Self.with([kSecAttrAccount as String: "nobody"]), change) == errSecItemNotFound)
            // Delete refuses a limit of one, accepts "all", and ignores return keys and data.
            #expect(SecItemDelete(Self.with([kSecMatchLimit as String: kSecMatchLimitOne])) == errSecParam)
            #expect(SecItemDelete(Self.with([kSecAttrAccount as String: "nobody"])) == errSecItemNotFound)
            #expect(SecItemDelete(Self.with([kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnData as String: true,
                                             kSecValueData as String: Data("ignored".utf8)])) == errSecSuccess)
            #expect(SecItemDelete(Self.password) == errSecItemNotFound)
        }
    }

    @Test("An update that would make two items share a primary key is refused and changes nothing")
    func updateToDuplicate() throws {
        let file = try TemporaryKeychain()
        try file.run {
            #expect(SecItemAdd(Self.with([kSecValueData as String: Data("ann".utf8)]), nil) == errSecSuccess)
            #expect(SecItemAdd(Self.with([kSecAttrAccount as String: "bob", kSecValueData as String: Data("bob".utf8)]), nil) == errSecSuccess)
            #expect(SecItemUpdate(Self.with([kSecAttrAccount as String: "bob"]), [kSecAttrAccount as String: "ann"]) == errSecDuplicateItem)
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(Self.with([kSecAttrAccount as String: "bob", kSecReturnData as String: true]), &result) == errSecSuccess)
            #expect(result as? Data == Data("bob".utf8))
            _ = try #require(result)
        }
    }

    @Test("Values are accepted in the forms Apple's keychain accepts")
    func acceptedForms() throws {
        let file = try TemporaryKeychain()
        try file.run {
            let optionalAccount: String? = "ann"
            #expect(SecItemAdd([
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: NSString(string: "com.example.forms"),
                kSecAttrAccount as String: optionalAccount as Any,
                kSecAttrGeneric as String: [UInt8]([1, 2, 3]),
                kSecAttrIsInvisible as String: NSNumber(value: 1),
                kSecAttrIsNegative as String: 0,
                kSecAttrCreator as String: "aapl",
                kSecAttrType as String: NSNumber(value: 0x6b65_7973),
                kSecAttrSynchronizable as String: false,
                kSecUseDataProtectionKeychain as String: true,
                kSecValueData as String: NSData(data: Data("s3cret".utf8)),
            ], nil) == errSecSuccess)
            let found = try file.keychain.find(GenericPassword.self, matching: .genericPassword(service: "com.example.forms"))
            let item = try #require(found.first)
            #expect(item.account == "ann")
            #expect(item.generic == [1, 2, 3])
            #expect(item.isInvisible == true)
            #expect(item.isNegative == false)
            #expect(item.creator == 0x6161_706c)
            #expect(item.itemType == 0x6b65_7973)
            #expect(item.passwordString == "s3cret")
        }
    }

    @Test("Odd values under every attribute key give a status, never a crash")
    func oddValues() throws {
        let file = try TemporaryKeychain()
        let oddValues: [Any] = [NSNull(), [1, 2], ["a": 1], Date(), 1.5, -1, Int64.max, "", Data(), UUID(), NSObject(), true]
        let keys = [kSecAttrAccessGroup, kSecAttrAccessible, kSecAttrSynchronizable, kSecAttrLabel, kSecAttrCreationDate,
                    kSecAttrAccount, kSecAttrService, kSecAttrGeneric, kSecAttrDescription, kSecAttrComment, kSecAttrCreator,
                    kSecAttrType, kSecAttrIsInvisible, kSecAttrIsNegative, kSecAttrServer, kSecAttrPort, kSecAttrProtocol,
                    kSecAttrKeyClass, kSecAttrApplicationTag, kSecAttrKeySizeInBits, kSecMatchLimit, kSecReturnData,
                    kSecValueData, kSecValuePersistentRef, kSecClass, kSecUseDataProtectionKeychain]
        let allowed: Set<OSStatus> = [errSecSuccess, errSecParam, errSecNoSuchAttr, errSecNoSuchClass, errSecDuplicateItem,
                                      errSecItemNotFound]
        try file.run {
            for (index, key) in keys.enumerated() {
                for value in oddValues {
                    var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                                kSecAttrService as String: "odd-\(index)"]
                    query[key] = value
                    var result: CFTypeRef?
                    let statuses = [SecItemAdd(query, nil), SecItemCopyMatching(query, &result),
                                    SecItemUpdate(query, [key: value]), SecItemDelete(query)]
                    try #require(statuses.allSatisfy(allowed.contains), "\(key) = \(value): \(statuses)")
                }
            }
        }
    }
}
