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
        let run = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            [directory = file.directory as String] in
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

                // A status says what kind of failure; SecItemKeychain.lastFailure says why, for this thread's last call.
                status = SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecValueData as String: "s3cret"] as CFDictionary, nil)
                print(SecItemKeychain.lastFailure!)   // SecItemAdd: -50, One or more parameters … (kSecValueData: expected Data, got …)
                // example end
                #expect(status == errSecParam)
                #expect(SecItemKeychain.lastFailure?.reason == "kSecValueData: expected Data, got a value of type String")
                #expect(result as? Data == Data("s3cret".utf8))
                #expect(SecItemAdd(query as CFDictionary, nil) == errSecDuplicateItem)
            } catch {
                Issue.record(error, "the README's SecItem example threw")
            }
        }
        let printed = String(decoding: run?.standardOutputContent ?? [], as: UTF8.self)
        #expect(printed.hasPrefix("SecItemAdd: -50, One or more parameters passed to a function were not valid. (kSecValueData: "), "\(printed)")
        withExtendedLifetime(file) {}
    }
}
