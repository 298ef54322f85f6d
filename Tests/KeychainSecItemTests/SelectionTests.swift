import Foundation
import Testing
import KeychainFile
import KeychainSecItem

/// The program-wide selection is shared by every test, so the tests that change it run one at a time; all
/// other suites bind their keychain to their task with `run`, which takes precedence.
@Suite("Keychain selection", .serialized)
struct SelectionTests {
    static var query: [String: Any] { [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "sel"] }

    @Test("Before a keychain is selected every function returns errSecNoSuchKeychain and clears the result")
    func nothingSelected() {
        SecItemKeychain.stopUsing()
        #expect(SecItemKeychain.current == nil)
        var result: CFTypeRef? = NSData()
        #expect(SecItemAdd(Self.query, &result) == errSecNoSuchKeychain)
        #expect(result == nil)
        result = NSData()
        #expect(SecItemCopyMatching(Self.query, &result) == errSecNoSuchKeychain)
        #expect(result == nil)
        #expect(SecItemUpdate(Self.query, [kSecAttrLabel as String: "x"]) == errSecNoSuchKeychain)
        #expect(SecItemDelete(Self.query) == errSecNoSuchKeychain)
        let failure = SecItemKeychain.lastFailure
        #expect(failure?.function == "SecItemDelete" && failure?.status == errSecNoSuchKeychain)
        #expect(failure?.reason.contains("SecItemKeychain.use(_:accessGroups:)") == true, "\(String(describing: failure))")
    }

    @Test("The selected keychain is used from every thread until the selection is cleared")
    func programWideSelection() throws {
        let file = try TemporaryKeychain()
        SecItemKeychain.use(file.keychain)
        defer { SecItemKeychain.stopUsing() }
        #expect(SecItemKeychain.current?.keychain === file.keychain)
        let statuses = StatusList()
        DispatchQueue.concurrentPerform(iterations: 40) { index in
            var attributes = Self.query
            attributes[kSecAttrAccount as String] = "account-\(index)"
            attributes[kSecValueData as String] = Data("\(index)".utf8)
            statuses.append(SecItemAdd(attributes, nil))
        }
        #expect(statuses.values == Array(repeating: errSecSuccess, count: 40))
        var result: CFTypeRef?
        var all = Self.query
        all[kSecReturnData as String] = true
        all[kSecMatchLimit as String] = kSecMatchLimitAll
        #expect(SecItemCopyMatching(all, &result) == errSecSuccess)
        let secrets = (result as? [Data])?.map { String(decoding: $0, as: UTF8.self) } ?? []
        #expect(Set(secrets) == Set((0..<40).map(String.init)))
        SecItemKeychain.stopUsing()
        #expect(SecItemDelete(Self.query) == errSecNoSuchKeychain)
        #expect(try file.keychain.search(.genericPassword(service: "sel")).count == 40)
    }

    @Test("A task's own keychain takes precedence over the program-wide one, in child tasks too")
    func taskSelection() async throws {
        let global = try TemporaryKeychain()
        let scoped = try TemporaryKeychain()
        SecItemKeychain.use(global.keychain)
        defer { SecItemKeychain.stopUsing() }
        let selection = SecItemKeychain(scoped.keychain, accessGroups: ["TEAMID.tool"])
        let statuses = await selection.run { () async -> [OSStatus] in
            await withTaskGroup(of: OSStatus.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        var attributes = Self.query
                        attributes[kSecAttrAccount as String] = "child-\(index)"
                        return SecItemAdd(attributes, nil)
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(statuses == Array(repeating: errSecSuccess, count: 8))
        let groups = selection.run { SecItemKeychain.current?.accessGroups }
        #expect(groups == ["TEAMID.tool"])
        #expect(SecItemKeychain.current?.keychain === global.keychain)
        let scopedItems = try await scoped.keychain.async.find(GenericPassword.self, matching: .genericPassword(service: "sel"))
        #expect(scopedItems.count == 8)
        #expect(scopedItems.allSatisfy { $0.accessGroup == "TEAMID.tool" })
        #expect(throws: KeychainError.itemNotFound) { try global.keychain.search(.genericPassword(service: "sel")) }
    }
}

/// Statuses collected from several threads.
final class StatusList: @unchecked Sendable {
    // `@unchecked Sendable`: `storage` is only touched under `lock`.
    private let lock = NSLock()
    private var storage: [OSStatus] = []

    func append(_ status: OSStatus) {
        lock.lock()
        storage.append(status)
        lock.unlock()
    }

    var values: [OSStatus] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
