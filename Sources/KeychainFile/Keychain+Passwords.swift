#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The everyday case: one secret per service and account, as generic passwords.
///
/// These calls read and write generic passwords with the default access group, not synchronizable. Like every
/// call of the library they throw on failure. A missing item is `KeychainError.itemNotFound` for the plain
/// reads and removals; the `…IfPresent` forms and the subscript return `nil` (or `false`) for it instead, and
/// throw for every other failure.
extension Keychain {
    /// The password stored for a service and account, as text.
    ///
    /// For example:
    /// ```swift
    /// try keychain.setPassword("s3cret", forService: "mail.example.com", account: "ann")
    /// let password = try keychain.password(forService: "mail.example.com", account: "ann")   // "s3cret"
    /// ```
    ///
    /// - Parameters:
    ///   - service: The service.
    ///   - account: The account.
    /// - Returns: The password, decoded as UTF-8.
    /// - Throws: `KeychainError.itemNotFound` if there is none; `.invalidParameter` if the stored bytes are not
    ///   UTF-8 (use ``data(forService:account:)->[UInt8]``).
    public func password(forService service: String, account: String) throws(KeychainError) -> String {
        guard let password = try passwordIfPresent(forService: service, account: account) else { throw .itemNotFound }
        return password
    }

    /// The password stored for a service and account, as text, or `nil` if there is none. Every other failure
    /// throws — bytes that are not UTF-8, wrong credentials, I/O — so `nil` always means "not there" and
    /// `try?` is never needed.
    ///
    /// For example:
    /// ```swift
    /// guard let password = try keychain.passwordIfPresent(forService: "mail.example.com", account: "ann") else {
    ///     return askForPassword()
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - service: The service.
    ///   - account: The account.
    /// - Returns: The password, decoded as UTF-8, or `nil` if no generic password has this service and account.
    /// - Throws: `KeychainError.invalidParameter` if the stored bytes are not UTF-8; what
    ///   ``dataIfPresent(forService:account:)->[UInt8]?`` throws.
    public func passwordIfPresent(forService service: String, account: String) throws(KeychainError) -> String? {
        guard let bytes = try dataIfPresent(forService: service, account: account) as [UInt8]? else { return nil }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .invalidParameter("the secret of \(service)/\(account) is not UTF-8 text; read it with data(forService:account:)")
        }
        return text
    }

    /// The password stored for a service and account, or `nil` if there is none:
    /// ``passwordIfPresent(forService:account:)``, as a subscript. It is read-only because a write can fail
    /// and a subscript's setter cannot throw; store with ``setPassword(_:forService:account:)``.
    ///
    /// For example:
    /// ```swift
    /// try keychain.setPassword("s3cret", forService: "mail.example.com", account: "ann")
    /// let password = try keychain[service: "mail.example.com", account: "ann"]   // Optional("s3cret")
    /// ```
    ///
    /// - Throws: What ``passwordIfPresent(forService:account:)`` throws; never for a missing item.
    public subscript(service service: String, account account: String) -> String? {
        get throws(KeychainError) { try passwordIfPresent(forService: service, account: account) }
    }

    /// Stores a password for a service and account: adds the item, or replaces the secret of the one there.
    ///
    /// - Parameters:
    ///   - password: The password, stored as UTF-8.
    ///   - service: The service.
    ///   - account: The account.
    /// - Throws: `KeychainError.invalidParameter` for a value over the limits; `.io`.
    public func setPassword(_ password: String, forService service: String, account: String) throws(KeychainError) {
        try setData(Array(password.utf8), forService: service, account: account)
    }

    /// The secret bytes stored for a service and account.
    ///
    /// For example:
    /// ```swift
    /// let token = try keychain.data(forService: "api.example.com", account: "build-bot")
    /// ```
    ///
    /// - Parameters:
    ///   - service: The service.
    ///   - account: The account.
    /// - Returns: The secret.
    /// - Throws: `KeychainError.itemNotFound` if there is none.
    public func data(forService service: String, account: String) throws(KeychainError) -> [UInt8] {
        guard let bytes = try dataIfPresent(forService: service, account: account) else { throw .itemNotFound }
        return bytes
    }

    /// The secret bytes stored for a service and account, as `Data`: ``data(forService:account:)->[UInt8]`` for
    /// code that works in `Data`. Chosen where the result is used as `Data`; elsewhere the `[UInt8]` form is.
    ///
    /// For example:
    /// ```swift
    /// let token: Data = try keychain.data(forService: "api.example.com", account: "build-bot")
    /// ```
    ///
    /// - Throws: `KeychainError.itemNotFound` if there is none.
    @_disfavoredOverload
    public func data(forService service: String, account: String) throws(KeychainError) -> Data {
        Data(try data(forService: service, account: account) as [UInt8])
    }

    /// The secret bytes stored for a service and account, or `nil` if there is none. Every other failure
    /// throws: `nil` always means "not there", never "could not be read".
    ///
    /// For example:
    /// ```swift
    /// if let token = try keychain.dataIfPresent(forService: "api.example.com", account: "build-bot") { use(token) }
    /// ```
    ///
    /// - Parameters:
    ///   - service: The service.
    ///   - account: The account.
    /// - Returns: The secret, or `nil` if no generic password has this service and account.
    /// - Throws: What catching up with the file throws (`.wrongCredentials` after another process rotated the
    ///   keys, `.corrupted`, `.io`, …); `.invalidParameter` for a service or account over the limits.
    public func dataIfPresent(forService service: String, account: String) throws(KeychainError) -> [UInt8]? {
        if service.utf8.count <= ItemAttributes.maximumValueByteCount, account.utf8.count <= ItemAttributes.maximumValueByteCount {
            // The common case, without building a query: the same item the query below finds.
            return try withRead { () throws(KeychainError) -> [UInt8]? in
                try withIndexInPlace { (index) throws(KeychainError) -> [UInt8]? in
                    guard let position = index.firstGenericPassword(service: service, account: account) else { return nil }
                    let item = index.item(atPosition: position)
                    return try log.decryptSecret(of: item)
                }
            }
        }
        // A value too long to be stored: the query's validation names it.
        var query = Query.genericPassword(service: service, account: account)
        query.limit = .one
        do throws(KeychainError) {
            return try search(query, returning: .data).first?.value
        } catch .itemNotFound {
            return nil
        }
    }

    /// ``dataIfPresent(forService:account:)->[UInt8]?`` as `Data`, chosen where the result is used as `Data`.
    ///
    /// - Throws: What ``dataIfPresent(forService:account:)->[UInt8]?`` throws.
    @_disfavoredOverload
    public func dataIfPresent(forService service: String, account: String) throws(KeychainError) -> Data? {
        (try dataIfPresent(forService: service, account: account) as [UInt8]?).map { Data($0) }
    }

    /// Stores secret bytes for a service and account: adds the item, or replaces the secret of the one there,
    /// as one durable record.
    ///
    /// - Parameters:
    ///   - data: The secret (at most 1 MiB).
    ///   - service: The service.
    ///   - account: The account.
    /// - Throws: `KeychainError.invalidParameter` for a value over the limits; `.io`.
    public func setData(_ data: [UInt8], forService service: String, account: String) throws(KeychainError) {
        try batch { (batch) throws(KeychainError) in
            do throws(KeychainError) {
                try batch.update(.genericPassword(service: service, account: account), setting: [:], secret: data)
            } catch .itemNotFound {
                try batch.add(GenericPassword(service: service, account: account, value: data))
            }
        }
    }

    /// Stores secret bytes given as `Data` for a service and account: ``setData(_:forService:account:)-([UInt8],_,_)``.
    ///
    /// For example:
    /// ```swift
    /// try keychain.setData(Data("token".utf8), forService: "api.example.com", account: "build-bot")
    /// ```
    ///
    /// - Throws: What ``setData(_:forService:account:)-([UInt8],_,_)`` throws.
    public func setData(_ data: Data, forService service: String, account: String) throws(KeychainError) {
        try setData(Array(data), forService: service, account: account)
    }

    /// Removes the password for a service and account.
    ///
    /// - Throws: `KeychainError.itemNotFound` if there is none (``removePasswordIfPresent(forService:account:)``
    ///   does not).
    public func removePassword(forService service: String, account: String) throws(KeychainError) {
        try delete(.genericPassword(service: service, account: account))
    }

    /// Removes the password for a service and account if there is one: removing what may be missing, as a
    /// choice written in the code.
    ///
    /// For example:
    /// ```swift
    /// try keychain.removePasswordIfPresent(forService: "mail.example.com", account: "ann")   // signing out
    /// ```
    ///
    /// - Returns: Whether there was one to remove.
    /// - Throws: What committing throws (`.io`, `.readOnly`, …); never for a missing item.
    @discardableResult
    public func removePasswordIfPresent(forService service: String, account: String) throws(KeychainError) -> Bool {
        try deleteIfPresent(.genericPassword(service: service, account: account)) > 0
    }

    /// The accounts that have a password for a service, in the order they were added.
    ///
    /// For example:
    /// ```swift
    /// for account in try keychain.accounts(forService: "mail.example.com") { print(account) }
    /// ```
    ///
    /// - Parameter service: The service.
    /// - Returns: The accounts; empty if the service has none (listing is not a lookup of one item).
    /// - Throws: What catching up with the file throws (`.corrupted`, `.io`, …).
    public func accounts(forService service: String) throws(KeychainError) -> [String] {
        do throws(KeychainError) {
            return try search(.genericPassword(service: service), returning: .attributes).compactMap {
                $0.attributes?.string(.account)
            }
        } catch .itemNotFound {
            return []
        }
    }

    /// Stores a `Codable` value as JSON under a service and account.
    ///
    /// For example:
    /// ```swift
    /// struct Token: Codable { var access: String; var expires: Date }
    /// try keychain.setValue(Token(access: "abc", expires: .now), forService: "api", account: "me")
    /// let token = try keychain.value(Token.self, forService: "api", account: "me")
    /// ```
    ///
    /// - Parameters:
    ///   - value: The value; encoded with `JSONEncoder`.
    ///   - service: The service.
    ///   - account: The account.
    /// - Throws: `KeychainError.invalidParameter` if the value does not encode; what ``setData(_:forService:account:)-([UInt8],_,_)``
    ///   throws.
    public func setValue<Value: Encodable>(_ value: Value, forService service: String, account: String) throws(KeychainError) {
        try setData(try Self.encodeJSON(value), forService: service, account: account)
    }

    /// Reads a `Codable` value stored with ``setValue(_:forService:account:)``.
    ///
    /// - Parameters:
    ///   - type: The value's type.
    ///   - service: The service.
    ///   - account: The account.
    /// - Returns: The decoded value.
    /// - Throws: `KeychainError.itemNotFound` if there is none; `.invalidParameter` if the stored bytes do not
    ///   decode as `type`.
    public func value<Value: Decodable>(_ type: Value.Type, forService service: String, account: String) throws(KeychainError) -> Value {
        try Self.decodeJSON(type, from: try data(forService: service, account: account), service: service, account: account)
    }

    /// Reads a `Codable` value stored with ``setValue(_:forService:account:)``, or `nil` if there is none.
    ///
    /// For example:
    /// ```swift
    /// let token = try keychain.valueIfPresent(Token.self, forService: "api", account: "me") ?? Token.signedOut
    /// ```
    ///
    /// - Returns: The decoded value, or `nil` if no generic password has this service and account.
    /// - Throws: `KeychainError.invalidParameter` if the stored bytes do not decode as `type`; what
    ///   ``dataIfPresent(forService:account:)->[UInt8]?`` throws.
    public func valueIfPresent<Value: Decodable>(
        _ type: Value.Type, forService service: String, account: String
    ) throws(KeychainError) -> Value? {
        guard let bytes = try dataIfPresent(forService: service, account: account) as [UInt8]? else { return nil }
        return try Self.decodeJSON(type, from: bytes, service: service, account: account)
    }

    /// `value` as JSON, the secret ``setValue(_:forService:account:)`` stores.
    ///
    /// - Throws: `KeychainError.invalidParameter` if it does not encode.
    static func encodeJSON<Value: Encodable>(_ value: Value) throws(KeychainError) -> [UInt8] {
        do {
            return Array(try JSONEncoder().encode(value))
        } catch {
            throw .invalidParameter("\(Value.self) does not encode as JSON: \(error)")
        }
    }

    /// The value the JSON `bytes`, the secret of `service` and `account`, hold.
    ///
    /// - Throws: `KeychainError.invalidParameter` if they do not decode as `type`.
    static func decodeJSON<Value: Decodable>(
        _ type: Value.Type, from bytes: [UInt8], service: String, account: String
    ) throws(KeychainError) -> Value {
        do {
            return try JSONDecoder().decode(Value.self, from: Data(bytes))
        } catch {
            throw .invalidParameter("the secret of \(service)/\(account) does not decode as \(Value.self): \(error)")
        }
    }
}
