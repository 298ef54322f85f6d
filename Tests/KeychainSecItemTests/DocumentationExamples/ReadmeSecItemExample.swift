// README.md's SecItem block, as the regions between `// example: readme-secitem` and `// example end`
// (DocumentationExampleTests, in KeychainFileTests, checks it byte for byte). This file imports only what the
// block imports (and Testing and the test support).
// example: readme-secitem
import Foundation
import KeychainFile
import KeychainSecItem
// example end
import KeychainTestSupport
import Testing

/// The README's SecItem example, run as written in a process of its own: it selects the keychain for the whole
/// process (`SecItemKeychain.use`), which no other test may see.
@Suite("README SecItem example")
struct ReadmeSecItemExample {
    @Test("The SecItem block adds a password and reads it back as Data, as written")
    func secItemBlock() async throws {
        let file = try TemporaryKeychain()
        await #expect(processExitsWith: .success) { [directory = file.directory as String] in
            do {
                try ExampleSandbox.enter(directory)
                let path = "test.kcf"
                let passphrase = "correct horse battery staple"
                // example: readme-secitem

                SecItemKeychain.use(try Keychain.open(at: path, credential: .password(passphrase)))

                let query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: "mail.example.com",
                    kSecAttrAccount as String: "ann",
                    kSecValueData as String: "s3cret".data(using: .utf8)!,
                ]
                var status = SecItemAdd(query as CFDictionary, nil)          // errSecDuplicateItem if it exists

                var result: AnyObject?
                status = SecItemCopyMatching([
                    kSecClass as String: kSecClassGenericPassword,
                    kSecAttrService as String: "mail.example.com",
                    kSecReturnData as String: true,
                    kSecMatchLimit as String: kSecMatchLimitOne,
                ] as CFDictionary, &result)                                   // result is Data
                // example end
                #expect(status == errSecSuccess)
                #expect(result as? Data == Data("s3cret".utf8))
                #expect(SecItemAdd(query as CFDictionary, nil) == errSecDuplicateItem)
            } catch {
                Issue.record(error, "the README's SecItem example threw")
            }
        }
        withExtendedLifetime(file) {}
    }
}
