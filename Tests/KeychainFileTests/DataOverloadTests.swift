import Foundation
import Testing
@testable import KeychainFile

/// `Data` forms of `setData` and `data`: a result used as `Data` reads as `Data`, and `[UInt8]` stays the
/// default, so existing code compiles unchanged.
@Suite("Data overloads")
struct DataOverloadTests {
    /// Whether `value`'s static type is `[UInt8]`: which overload Swift chose.
    private func isByteArray<T>(_ value: T) -> Bool { T.self == [UInt8].self }

    @Test("setData takes Data, [UInt8] and array literals; data reads as Data where Data is asked for, else [UInt8]")
    func dataOverloads() throws {
        let keychain = try Keychain.inMemory()
        try keychain.setData(Data("token".utf8), forService: "api", account: "bot")
        let asData: Data = try keychain.data(forService: "api", account: "bot")
        #expect(asData == Data("token".utf8))
        let plain = try keychain.data(forService: "api", account: "bot")
        #expect(isByteArray(plain), "an unannotated read is no longer [UInt8]")
        #expect(plain == Array("token".utf8))
        try keychain.setData([1, 2, 3], forService: "api", account: "literal")
        #expect(try keychain.data(forService: "api", account: "literal") == [1, 2, 3])
        try keychain.setData(Data(), forService: "api", account: "empty")
        #expect((try keychain.data(forService: "api", account: "empty") as Data).isEmpty)

        let present: Data? = try keychain.dataIfPresent(forService: "api", account: "bot")
        #expect(present == Data("token".utf8))
        let missing: Data? = try keychain.dataIfPresent(forService: "api", account: "nobody")
        #expect(missing == nil)
        #expect(isByteArray(try keychain.dataIfPresent(forService: "api", account: "bot")!))
        #expect(throws: KeychainError.itemNotFound) { try keychain.data(forService: "api", account: "nobody") as Data }
    }

    @Test("The async view has the same Data forms")
    func asyncDataOverloads() async throws {
        let keychain = try Keychain.inMemory().async
        try await keychain.setData(Data("token".utf8), forService: "api", account: "bot")
        let asData: Data = try await keychain.data(forService: "api", account: "bot")
        #expect(asData == Data("token".utf8))
        let plain = try await keychain.data(forService: "api", account: "bot")
        #expect(isByteArray(plain))
        let present: Data? = try await keychain.dataIfPresent(forService: "api", account: "bot")
        #expect(present == Data("token".utf8))
        #expect(try await keychain.dataIfPresent(forService: "api", account: "nobody") as [UInt8]? == nil)
    }
}
