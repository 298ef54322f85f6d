import Foundation
import Testing
@testable import KeychainFile

/// `password` on generic and internet passwords, and `InternetPassword(…, password:)`: the names the
/// initialisers already use.
@Suite("Password properties")
struct PasswordPropertyTests {
    @Test("password reads the secret as text, writes it as UTF-8, and is nil when not loaded or not UTF-8")
    func genericPassword() throws {
        var item = GenericPassword(service: "mail", account: "ann", password: "s3cret")
        #expect(item.password == "s3cret")
        item.password = "nëw"
        #expect(item.value == Array("nëw".utf8))
        #expect(item.passwordString == "nëw")
        item.password = nil
        #expect(item.value == nil && item.password == nil)
        item.value = [0xff]
        #expect(item.password == nil)
        item.passwordString = "via the first name"
        #expect(item.password == "via the first name")
    }

    @Test("An internet password has the same password property and a password: initialiser with every common field")
    func internetPassword() throws {
        var item = InternetPassword(
            server: "example.com", account: "ann", password: "pw", protocolType: .https, port: 443,
            accessible: .afterFirstUnlock, synchronizable: true, label: "Example")
        #expect(item.password == "pw" && item.value == Array("pw".utf8))
        #expect(item.accessible == .afterFirstUnlock && item.synchronizable && item.label == "Example")
        #expect(item.protocolType == .https && item.port == 443)
        item.password = "pw2"
        #expect(item.passwordString == "pw2")

        let keychain = try Keychain.inMemory()
        try keychain.add(item)
        let found = try keychain.find(InternetPassword.self, matching: Query(.internetPassword, synchronizable: .any))
        #expect(found.map(\.password) == ["pw2"])
        #expect(found[0].accessible == .afterFirstUnlock && found[0].synchronizable)
        let withoutValues = try keychain.find(InternetPassword.self, matching: Query(.internetPassword, synchronizable: .any), loadingValues: false)
        #expect(withoutValues[0].password == nil, "a secret that was not loaded read as a password")
    }
}
