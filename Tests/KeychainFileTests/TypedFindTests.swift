import Foundation
import Testing
@testable import KeychainFile

/// A conformer outside the library whose initialiser uses the keychain (here: reads its count).
private struct CountingPassword: KeychainItem {
    nonisolated(unsafe) static var keychain: Keychain? = nil
    static var itemClass: ItemClass { .genericPassword }
    var inner: GenericPassword
    var countSeen: Int?
    var value: [UInt8]? { get { inner.value } set { inner.value = newValue } }
    var attributes: ItemAttributes { get throws(KeychainError) { try inner.attributes } }
    init(attributes: ItemAttributes, value: [UInt8]?) throws(KeychainError) {
        inner = try GenericPassword(attributes: attributes, value: value)
        countSeen = Self.keychain?.count
    }
}

/// The typed `find` builds its items straight from the index instead of going through `search`; it must
/// return exactly what `search` returns, converted, in the same order, with the same errors.
@Suite("find(_:matching:) agrees with search(_:returning:)")
struct TypedFindTests {
    /// What `find` stood for before it read the index itself.
    private func viaSearch<Item: KeychainItem>(
        _ keychain: Keychain, _ type: Item.Type, _ query: Query, loadingValues: Bool
    ) -> Result<[Item], KeychainError> {
        do throws(KeychainError) {
            let results = try keychain.search(query, returning: loadingValues ? [.attributes, .data] : [.attributes])
            var items: [Item] = []
            for result in results { items.append(try Item(attributes: result.attributes!, value: result.value)) }
            return .success(items)
        } catch {
            return .failure(error)
        }
    }

    private func viaFind<Item: KeychainItem>(
        _ keychain: Keychain, _ type: Item.Type, _ query: Query, loadingValues: Bool
    ) -> Result<[Item], KeychainError> {
        do throws(KeychainError) {
            return .success(try keychain.find(type, matching: query, loadingValues: loadingValues))
        } catch {
            return .failure(error)
        }
    }

    @Test("Same items in the same order for indexed, unindexed, limited and referenced queries, through deletions")
    func agreesWithSearch() throws {
        let keychain = try Keychain.inMemory()
        var random = TestRandom(seed: 0x5EED_F17D)
        // What was added, in order, for an expectation that does not come from the code under test.
        var added: [(account: String, service: String, group: String, synced: Bool, live: Bool)] = []
        // Few services and accounts, so that queries by service alone have many matches, spread over the
        // index's pages in an order that deletions (which move the last item into the hole) scramble.
        for number in 0..<300 {
            let service = "service-\(Int.random(in: 0..<4, using: &random))"
            let account = "account-\(number)"
            let group = ["", "g1", "g2"][Int.random(in: 0..<3, using: &random)]
            let synced = Int.random(in: 0..<5, using: &random) == 0
            try keychain.add(GenericPassword(
                service: service, account: account, accessGroup: group, synchronizable: synced,
                label: number % 7 == 0 ? "seventh" : nil, comment: number % 2 == 0 ? "even" : nil,
                value: Array("secret \(number)".utf8)))
            added.append((account, service, group, synced, true))
            if number % 3 == 0 {
                try keychain.add(InternetPassword(server: "\(service).example", account: account, password: "net \(number)"))
            }
        }
        var references: [PersistentReference] = []
        for result in try keychain.search(Query(.genericPassword, synchronizable: .any, returning: [.persistentReference])) {
            references.append(result.persistentReference!)
        }

        func queries() -> [Query] {
            var list: [Query] = [
                Query(.genericPassword), Query(.genericPassword, synchronizable: .any),
                Query(.genericPassword, synchronizable: .yes),
                .genericPassword(service: "service-1"), .genericPassword(service: "service-2", account: "account-10"),
                .genericPassword(service: "service-0", account: "no such account"),
                Query(.genericPassword, attributes: [.label: .string("seventh")]),
                Query(.genericPassword, attributes: [.comment: .string("even"), .service: .string("service-3")]),
                Query(.genericPassword, attributes: [.accessGroup: .string("g1")], synchronizable: .any),
                Query(.genericPassword, attributes: [.service: .string("service-1"), .accessGroup: .string("")]),
            ]
            for (position, reference) in references.enumerated() where position % 37 == 0 {
                list.append(Query(.genericPassword, synchronizable: .any, persistentReference: reference))
                list.append(Query(.genericPassword, attributes: [.service: .string("service-0")], persistentReference: reference))
            }
            for query in list {
                var one = query
                one.limit = .one
                list.append(one)
            }
            return list
        }

        func check(_ stage: String) {
            for query in queries() {
                for loadingValues in [false, true] {
                    let expected = viaSearch(keychain, GenericPassword.self, query, loadingValues: loadingValues)
                    let found = viaFind(keychain, GenericPassword.self, query, loadingValues: loadingValues)
                    #expect(found == expected, "\(stage): \(query), loadingValues \(loadingValues)")
                }
            }
            // Matches come in the order the items were first added.
            for service in ["service-0", "service-1"] {
                let expected = added.filter { $0.live && $0.service == service && !$0.synced }.map(\.account)
                let found = (try? keychain.find(GenericPassword.self, matching: .genericPassword(service: service))) ?? []
                #expect(found.map(\.account) == expected, "\(stage): order of \(service)")
            }
            let internet = Query(.internetPassword, attributes: [.server: .string("service-1.example")])
            #expect(viaFind(keychain, InternetPassword.self, internet, loadingValues: true)
                    == viaSearch(keychain, InternetPassword.self, internet, loadingValues: true), "\(stage): internet")
        }

        check("after adds")
        #expect(try keychain.find(GenericPassword.self, matching: .genericPassword(service: "service-1")).count > 20)
        // Delete every fifth item (each moves the last item into its place in the index), then a group.
        for position in added.indices where position % 5 == 0 {
            try keychain.delete(Query(.genericPassword, attributes: [.account: .string(added[position].account)], synchronizable: .any))
            added[position].live = false
        }
        check("after deleting every fifth")
        try keychain.delete(Query(.genericPassword, attributes: [.accessGroup: .string("g2")], synchronizable: .any))
        for position in added.indices where added[position].group == "g2" { added[position].live = false }
        check("after deleting a group")
    }

    @Test("find builds items after releasing the keychain's lock: an item type whose initialiser uses the keychain works")
    func initialiserUsesTheKeychain() throws {
        let keychain = try Keychain.inMemory()
        try keychain.add(GenericPassword(service: "s", account: "a", password: "p"))
        try keychain.add(GenericPassword(service: "s", account: "b", password: "q"))
        CountingPassword.keychain = keychain
        defer { CountingPassword.keychain = nil }
        // On another thread, so that a deadlock fails the test instead of hanging it.
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var found: [CountingPassword] = []
        let thread = Thread {
            found = (try? keychain.find(CountingPassword.self, matching: .genericPassword(service: "s"))) ?? []
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + 10) == .success, "find did not return: the initialiser waited for the keychain's lock")
        #expect(found.map(\.inner.account) == ["a", "b"])
        #expect(found.allSatisfy { $0.countSeen == 2 })
    }

    @Test("A query of another class and an invalid query fail as search's caller saw them fail")
    func errors() throws {
        let keychain = try Keychain.inMemory()
        try keychain.add(GenericPassword(service: "s", account: "a", password: "p"))
        #expect(throws: KeychainError.itemNotFound) {
            try keychain.find(GenericPassword.self, matching: .genericPassword(service: "t"))
        }
        let wrongClass = viaFind(keychain, InternetPassword.self, .genericPassword(service: "s"), loadingValues: false)
        guard case .failure(.invalidParameter) = wrongClass else {
            Issue.record("a generic-password query for internet passwords gave \(wrongClass)")
            return
        }
        // `server` is not an attribute of generic passwords: both paths refuse it with the same message.
        let invalid = Query(.genericPassword, attributes: [.server: .string("x")])
        #expect(viaFind(keychain, GenericPassword.self, invalid, loadingValues: false)
                == viaSearch(keychain, GenericPassword.self, invalid, loadingValues: false))
        guard case .failure(.invalidParameter) = viaFind(keychain, GenericPassword.self, invalid, loadingValues: false) else {
            Issue.record("an invalid query was not refused")
            return
        }
    }
}
