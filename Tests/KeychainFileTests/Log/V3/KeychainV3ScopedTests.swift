import Foundation
import Testing
@testable import KeychainFile

/// A credential scoped to access groups (Docs/FormatVersion3.md §2.3), as far as plan step 4 has come: it opens the
/// file with the log key and its groups' keys alone, sees its groups' items and nothing of the others', and follows
/// other processes. Its writes: KeychainV3ScopedWriteTests.
@Suite("Format version 3: a credential scoped to access groups")
struct KeychainV3ScopedTests {
    static let scoped = Credential.password("scoped to group a")

    /// A keychain with items in the default group, A and B, and a credential scoped to A; B's accounts and secrets.
    static func keychain(in directory: TemporaryDirectory) throws -> (full: Keychain, path: String, secretsOfB: [String: [UInt8]]) {
        let full = try V3Keychain.create(in: directory)
        try KeychainV3GroupTests.add(full, group: "", count: 3)
        try KeychainV3GroupTests.add(full, group: KeychainV3GroupTests.groupA, count: 4)
        let secretsOfB = try KeychainV3GroupTests.add(full, group: KeychainV3GroupTests.groupB, count: 5)
        try full.addCredential(Self.scoped, scope: .groups([KeychainV3GroupTests.groupA]), keyDerivation: KeychainV3CredentialTests.cheap)
        return (full, directory.file("v3.kcf"), secretsOfB)
    }

    @Test("A credential scoped to group A opens A's items and nothing of B's: no value, no attribute, no count")
    func seesItsGroupOnly() throws {
        let directory = TemporaryDirectory()
        let (full, path, secretsOfB) = try Self.keychain(in: directory)
        let view = try V3Keychain.open(path, credential: Self.scoped)
        #expect(view.count == 4)
        let results = try view.search(Query(.genericPassword, limit: .all), returning: [.attributes, .data, .persistentReference])
        #expect(results.allSatisfy { $0.attributes?.string(.accessGroup) == KeychainV3GroupTests.groupA })
        let ofA = try full.search(Query(.genericPassword, limit: .all), returning: [.attributes, .data, .persistentReference])
            .filter { $0.attributes?.string(.accessGroup) == KeychainV3GroupTests.groupA }
        #expect(Set(results.map { "\($0.persistentReference!.itemID) \($0.attributes!) \($0.value!)" })
            == Set(ofA.map { "\($0.persistentReference!.itemID) \($0.attributes!) \($0.value!)" }))
        // Nothing the scoped keychain serves holds a value of B's: not a secret, not an account.
        // Every attribute value served, as text.
        let servedText = Data(results.flatMap { result in (result.attributes?.values ?? [:]).map { "\($0.value)" } }.joined(separator: "\n").utf8)
        let servedSecrets = Data(results.flatMap { $0.value ?? [] })
        for (account, secret) in secretsOfB {
            #expect(servedText.range(of: Data(account.utf8)) == nil, "B's account \(account) is served to A's holder")
            #expect(servedSecrets.range(of: Data(secret)) == nil, "B's secret of \(account) is served to A's holder")
        }
        // The check itself finds what is there: A's own values are served.
        let (accountOfA, secretOfA) = (try #require(results.first?.attributes?.string(.account)), try #require(results.first?.value))
        #expect(servedText.range(of: Data(accountOfA.utf8)) != nil && servedSecrets.range(of: Data(secretOfA)) != nil)
        #expect(throws: KeychainError.itemNotFound) {
            _ = try view.search(.genericPassword(service: "svc", account: "\(KeychainV3GroupTests.groupB)-0"), returning: .data)
        }
        // Its log follows group A alone and holds no root key and no key table.
        let log = try V3Keychain.log(view)
        let keyA = try #require(try V3Keychain.log(full).state.groups.keyID(named: KeychainV3GroupTests.groupA))
        #expect(Array(log.state.groups.byKeyID.keys) == [keyA])
        #expect(log.state.root == nil && log.state.groups.table == nil)
        // The full credential still sees all twelve.
        #expect(full.count == 12)
    }

    @Test("A scoped reader follows appends in its group and others, a compaction and a group added, with the keys it holds")
    func followsOtherProcesses() throws {
        let directory = TemporaryDirectory()
        let (full, path, _) = try Self.keychain(in: directory)
        let view = try V3Keychain.open(path, credential: Self.scoped)
        try KeychainV3GroupTests.add(full, group: KeychainV3GroupTests.groupA, count: 1, from: 20)
        try KeychainV3GroupTests.add(full, group: KeychainV3GroupTests.groupB, count: 1, from: 20)
        #expect(try V3CatchUpDerivesCredentialAgainTests.derivations { try view.refresh() } == 0)
        #expect(view.count == 5)
        try full.delete(.genericPassword(service: "svc", account: "\(KeychainV3GroupTests.groupA)-0"))
        try full.compact()
        #expect(try V3CatchUpDerivesCredentialAgainTests.derivations { try view.refresh() } == 0)
        #expect(view.count == 4)
        // A group added renews the root, which a scoped holder does not hold: it follows with the log key and its groups' keys.
        try KeychainV3GroupTests.add(full, group: "com.example.c", count: 2)
        #expect(try V3CatchUpDerivesCredentialAgainTests.derivations { try view.refresh() } == 0)
        #expect(view.count == 4)
        let reopened = try V3Keychain.open(path, credential: Self.scoped)
        #expect(try genericPasswordSnapshot(reopened).sorted() == genericPasswordSnapshot(view).sorted())
    }

    @Test("A scoped credential is refused for a group the keychain lacks, for no group, twice, and by a version 2 keychain")
    func refusals() throws {
        let directory = TemporaryDirectory()
        let (full, path, _) = try Self.keychain(in: directory)
        let before = try fileBytes(path)
        let cheap = KeychainV3CredentialTests.cheap
        #expect(throws: KeychainError.invalidParameter("")) { try full.addCredential(.password("x"), scope: .groups(["no such group"]), keyDerivation: cheap) }
        #expect(throws: KeychainError.invalidParameter("")) { try full.addCredential(.password("x"), scope: .groups([]), keyDerivation: cheap) }
        #expect(throws: KeychainError.invalidParameter("")) { try full.addCredential(Self.scoped, scope: .groups([KeychainV3GroupTests.groupB]), keyDerivation: cheap) }
        #expect(try fileBytes(path) == before)
        let v2 = try V2Keychain.create(in: directory)
        #expect(throws: KeychainError.invalidParameter("")) { try v2.addCredential(.password("x"), scope: .groups([""]), keyDerivation: cheap) }
    }
}
