import Foundation
import Testing
@testable import KeychainFile

/// `data(forService:account:)` answers without building a query; it must return exactly what the query
/// `genericPassword(service:account:)` with limit one returns.
@Suite("data(forService:account:) agrees with the query it stands for")
struct DataForServiceTests {
    private func viaQuery(_ keychain: Keychain, _ service: String, _ account: String) -> [UInt8]? {
        var query = Query.genericPassword(service: service, account: account)
        query.limit = .one
        return try? keychain.search(query, returning: .data).first?.value
    }

    @Test("Same answers across access groups, synchronizable items, empty values, deletions and misses")
    func agreesWithQuery() throws {
        let keychain = try Keychain.inMemory()
        try keychain.add(GenericPassword(service: "s", account: "a", password: "first"))
        try keychain.add(GenericPassword(service: "s", account: "a", password: "other group", accessGroup: "g2"))
        try keychain.add(GenericPassword(service: "s", account: "a", password: "synced", accessGroup: "g3", synchronizable: true))
        try keychain.add(GenericPassword(service: "s", account: "b", password: "b"))
        try keychain.add(GenericPassword(service: "", account: "", password: "empty"))
        try keychain.add(GenericPassword(service: "t", account: "only synced", password: "x", synchronizable: true))
        let probes = [("s", "a"), ("s", "b"), ("s", "c"), ("", ""), ("t", "only synced"), ("S", "a"), ("s", "a ")]
        func check() {
            for (service, account) in probes {
                #expect((try? keychain.data(forService: service, account: account)) == viaQuery(keychain, service, account),
                        "\(service)/\(account)")
            }
        }
        check()
        #expect(try keychain.data(forService: "s", account: "a") == Array("first".utf8))
        try keychain.delete(Query.genericPassword(service: "s", account: "a", accessGroup: ""))
        check()
        #expect(try keychain.data(forService: "s", account: "a") == Array("other group".utf8))
        #expect(throws: KeychainError.itemNotFound) { try keychain.data(forService: "t", account: "only synced") }
    }

    @Test("A service longer than any stored value is refused as the query refuses it")
    func tooLong() throws {
        let keychain = try Keychain.inMemory()
        let long = String(repeating: "x", count: 70_000)
        #expect(throws: KeychainError.self) { try keychain.data(forService: long, account: "a") }
        do {
            _ = try keychain.data(forService: long, account: "a")
        } catch {
            guard case .invalidParameter = error else {
                Issue.record("expected invalidParameter, got \(error)")
                return
            }
        }
    }
}
