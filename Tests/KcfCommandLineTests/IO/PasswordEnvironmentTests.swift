import Foundation
import Testing

/// `KCF_PASSWORD` is read byte for byte, whatever its first character is.
@Suite("kcf: the keychain password in KCF_PASSWORD")
struct PasswordEnvironmentTests {
    /// Passwords that begin with a combining mark (acute accent, Devanagari visarga, Kannada vowel sign o),
    /// which joins the `=` before it into one Character in `NAME=VALUE`.
    static let passwords = ["\u{0301}correct horse", "\u{0903}battery staple", "\u{0CCA}tr0ub4dor"]

    @Test("a password starting with a combining mark works in KCF_PASSWORD as it does on stdin, both ways",
          arguments: passwords)
    func leadingCombiningMark(password: String) throws {
        let sandbox = try KcfSandbox()
        let fromStdin = sandbox.file("stdin.kcf")
        let created = try sandbox.run(["create-keychain", "--insecure-iterations", "1000", fromStdin], stdin: password + "\n")
        #expect(created.status == 0, "\(created.stderr)")
        let opened = try sandbox.run(["find-generic-password", "-a", "nobody", fromStdin], extra: ["KCF_PASSWORD": password])
        #expect(opened.status == 44, "KCF_PASSWORD opens the keychain made with the password on stdin: \(opened.stderr)")

        let fromEnvironment = sandbox.file("environment.kcf")
        let made = try sandbox.run(["create-keychain", "--insecure-iterations", "1000", fromEnvironment],
                                   extra: ["KCF_PASSWORD": password])
        #expect(made.status == 0, "\(made.stderr)")
        let reopened = try sandbox.run(["find-generic-password", "-a", "nobody", fromEnvironment], stdin: password + "\n")
        #expect(reopened.status == 44, "stdin opens the keychain made with KCF_PASSWORD: \(reopened.stderr)")
    }
}
