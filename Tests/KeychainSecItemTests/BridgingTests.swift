import Foundation
import Testing
import KeychainFile
import KeychainSecItem

/// Ported code passes `query as CFDictionary`, builds `[CFString: Any]` queries and uses `kCFBooleanTrue`;
/// on Linux the module's Core Foundation names make that compile and work.
@Suite("Core Foundation spellings")
struct BridgingTests {
    @Test("CFDictionary, CFString keys, kCFBooleanTrue and CFTypeRef results work as on Apple platforms")
    func cfSpellings() throws {
        let file = try TemporaryKeychain()
        try file.run { () throws in
            let attributes: [CFString: Any] = [
                kSecClass: kSecClassGenericPassword,
                kSecAttrService: "com.example.cf",
                kSecAttrAccount: "ann",
                kSecValueData: Data("s3cret".utf8),
            ]
            #expect(SecItemAdd(attributes as CFDictionary, nil) == errSecSuccess)
            let query: NSMutableDictionary = [
                kSecClass: kSecClassGenericPassword,
                kSecAttrService: "com.example.cf",
                kSecReturnData: kCFBooleanTrue as Any,  // the implicitly unwrapped optional, as Any
                kSecMatchLimit: kSecMatchLimitOne,
            ]
            var item: CFTypeRef?
            #expect(SecItemCopyMatching(query, &item) == errSecSuccess)
            #expect(item as? Data == Data("s3cret".utf8))
            #expect(SecItemUpdate(["class": "genp"] as CFDictionary, [kSecAttrLabel: "cf"] as CFDictionary) == errSecSuccess)
            #expect(try file.keychain.find(GenericPassword.self, matching: .genericPassword(label: "cf")).count == 1)
            #expect(SecItemDelete(attributes as CFDictionary) == errSecSuccess)
        }
    }

    @Test("A CFDictionary whose keys are not strings is a parameter error")
    func nonStringKeys() throws {
        let file = try TemporaryKeychain()
        file.run {
            let odd = NSDictionary(dictionary: [1: "genp"])
            var item: CFTypeRef? = NSData()
            #expect(SecItemAdd(odd, &item) == errSecParam)
            #expect(item == nil)
            #expect(SecItemCopyMatching(odd, nil) == errSecParam)
            #expect(SecItemUpdate(odd, NSDictionary()) == errSecParam)
            #expect(SecItemDelete(odd) == errSecParam)
        }
    }
}
