#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One secret per service and account, from `async` code: the calls of `Keychain+Passwords`.
extension AsyncKeychain {
    /// ``Keychain/password(forService:account:)`` without blocking the caller.
    ///
    /// For example:
    /// ```swift
    /// let password = try await keychain.async.password(forService: "mail.example.com", account: "ann")
    /// ```
    ///
    /// - Throws: `KeychainError.itemNotFound` if there is none; what ``Keychain/password(forService:account:)``
    ///   throws.
    public func password(forService service: String, account: String) async throws(KeychainError) -> String {
        try await offload { (keychain) throws(KeychainError) in try keychain.password(forService: service, account: account) }
    }

    /// ``Keychain/setPassword(_:forService:account:)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/setPassword(_:forService:account:)`` throws.
    public func setPassword(_ password: String, forService service: String, account: String) async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in try keychain.setPassword(password, forService: service, account: account) }
    }

    /// ``Keychain/data(forService:account:)->[UInt8]`` without blocking the caller.
    ///
    /// - Throws: `KeychainError.itemNotFound` if there is none.
    public func data(forService service: String, account: String) async throws(KeychainError) -> [UInt8] {
        try await offload { (keychain) throws(KeychainError) -> [UInt8] in try keychain.data(forService: service, account: account) }
    }

    /// ``Keychain/setData(_:forService:account:)-([UInt8],_,_)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/setData(_:forService:account:)-([UInt8],_,_)`` throws.
    public func setData(_ data: [UInt8], forService service: String, account: String) async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in try keychain.setData(data, forService: service, account: account) }
    }

    /// ``Keychain/setValue(_:forService:account:)`` without blocking the caller; `value` is encoded on the
    /// caller's task.
    ///
    /// - Throws: What ``Keychain/setValue(_:forService:account:)`` throws.
    public func setValue<Value: Encodable>(_ value: Value, forService service: String, account: String) async throws(KeychainError) {
        try await setData(try Keychain.encodeJSON(value), forService: service, account: account)
    }

    /// ``Keychain/value(_:forService:account:)`` without blocking the caller; the value is decoded on the
    /// caller's task.
    ///
    /// - Throws: What ``Keychain/value(_:forService:account:)`` throws.
    public func value<Value: Decodable>(_ type: Value.Type, forService service: String, account: String) async throws(KeychainError) -> Value {
        try Keychain.decodeJSON(type, from: try await data(forService: service, account: account), service: service, account: account)
    }

    /// ``Keychain/removePassword(forService:account:)`` without blocking the caller.
    ///
    /// - Throws: `KeychainError.itemNotFound` if there is none.
    public func removePassword(forService service: String, account: String) async throws(KeychainError) {
        try await offload { (keychain) throws(KeychainError) in try keychain.removePassword(forService: service, account: account) }
    }

    /// ``Keychain/accounts(forService:)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/accounts(forService:)`` throws.
    public func accounts(forService service: String) async throws(KeychainError) -> [String] {
        try await offload { (keychain) throws(KeychainError) in try keychain.accounts(forService: service) }
    }

    /// ``Keychain/passwordIfPresent(forService:account:)`` without blocking the caller.
    ///
    /// - Returns: The password, or `nil` if there is none.
    /// - Throws: What ``Keychain/passwordIfPresent(forService:account:)`` throws; never for a missing item.
    public func passwordIfPresent(forService service: String, account: String) async throws(KeychainError) -> String? {
        try await offload { (keychain) throws(KeychainError) in try keychain.passwordIfPresent(forService: service, account: account) }
    }

    /// ``Keychain/subscript(service:account:)`` without blocking the caller.
    ///
    /// For example:
    /// ```swift
    /// let password = try await keychain.async[service: "mail.example.com", account: "ann"]
    /// ```
    ///
    /// - Throws: What ``Keychain/passwordIfPresent(forService:account:)`` throws; never for a missing item.
    public subscript(service service: String, account account: String) -> String? {
        get async throws(KeychainError) { try await passwordIfPresent(forService: service, account: account) }
    }

    /// ``Keychain/data(forService:account:)->Data`` without blocking the caller, chosen where the result is
    /// used as `Data`.
    ///
    /// - Throws: `KeychainError.itemNotFound` if there is none.
    @_disfavoredOverload
    public func data(forService service: String, account: String) async throws(KeychainError) -> Data {
        Data(try await data(forService: service, account: account) as [UInt8])
    }

    /// ``Keychain/dataIfPresent(forService:account:)->[UInt8]?`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/dataIfPresent(forService:account:)->[UInt8]?`` throws; never for a missing item.
    public func dataIfPresent(forService service: String, account: String) async throws(KeychainError) -> [UInt8]? {
        try await offload { (keychain) throws(KeychainError) -> [UInt8]? in try keychain.dataIfPresent(forService: service, account: account) }
    }

    /// ``Keychain/dataIfPresent(forService:account:)->Data?`` without blocking the caller, chosen where the
    /// result is used as `Data`.
    ///
    /// - Throws: What ``Keychain/dataIfPresent(forService:account:)->[UInt8]?`` throws; never for a missing item.
    @_disfavoredOverload
    public func dataIfPresent(forService service: String, account: String) async throws(KeychainError) -> Data? {
        (try await dataIfPresent(forService: service, account: account) as [UInt8]?).map { Data($0) }
    }

    /// ``Keychain/setData(_:forService:account:)-(Data,_,_)`` without blocking the caller.
    ///
    /// - Throws: What ``Keychain/setData(_:forService:account:)-([UInt8],_,_)`` throws.
    public func setData(_ data: Data, forService service: String, account: String) async throws(KeychainError) {
        try await setData(Array(data), forService: service, account: account)
    }

    /// ``Keychain/valueIfPresent(_:forService:account:)`` without blocking the caller; the value is decoded on
    /// the caller's task.
    ///
    /// - Returns: The decoded value, or `nil` if there is none.
    /// - Throws: What ``Keychain/valueIfPresent(_:forService:account:)`` throws; never for a missing item.
    public func valueIfPresent<Value: Decodable>(
        _ type: Value.Type, forService service: String, account: String
    ) async throws(KeychainError) -> Value? {
        guard let bytes = try await dataIfPresent(forService: service, account: account) as [UInt8]? else { return nil }
        return try Keychain.decodeJSON(type, from: bytes, service: service, account: account)
    }

    /// ``Keychain/removePasswordIfPresent(forService:account:)`` without blocking the caller.
    ///
    /// - Returns: Whether there was one to remove.
    /// - Throws: What committing throws; never for a missing item.
    @discardableResult
    public func removePasswordIfPresent(forService service: String, account: String) async throws(KeychainError) -> Bool {
        try await offload { (keychain) throws(KeychainError) in try keychain.removePasswordIfPresent(forService: service, account: account) }
    }
}
