#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Batch {
    /// Adds a typed item (a ``GenericPassword``, ``InternetPassword``, ``Certificate`` or ``Key``).
    ///
    /// - Parameter item: The item; its `value` is the secret (empty when `nil`).
    /// - Returns: The new item's persistent reference.
    /// - Throws: `KeychainError.duplicateItem` if an item with the same primary key exists;
    ///   `.invalidParameter` if a field breaks a limit.
    @discardableResult
    public mutating func add<Item: KeychainItem>(_ item: Item) throws(KeychainError) -> PersistentReference {
        try add(try item.attributes, secret: item.value ?? [])
    }

    /// Adds an identity: its certificate and its private key.
    ///
    /// - Returns: The persistent references of the certificate and the key.
    /// - Throws: `KeychainError.duplicateItem` if either already exists.
    @discardableResult
    public mutating func add(_ identity: Identity) throws(KeychainError) -> (certificate: PersistentReference, privateKey: PersistentReference) {
        (try add(identity.certificate), try add(identity.privateKey))
    }
}

extension Keychain {
    /// Adds a typed item durably.
    ///
    /// For example:
    /// ```swift
    /// try keychain.add(GenericPassword(service: "mail.example.com", account: "ann", password: "s3cret"))
    /// ```
    ///
    /// - Parameter item: The item; its `value` is the secret (empty when `nil`).
    /// - Returns: The new item's persistent reference.
    /// - Throws: `KeychainError.duplicateItem` if an item with the same primary key exists;
    ///   `.invalidParameter` if a field breaks a limit.
    @discardableResult
    public func add<Item: KeychainItem>(_ item: Item) throws(KeychainError) -> PersistentReference {
        try batch { (batch) throws(KeychainError) in try batch.add(item) }
    }

    /// Adds an identity — its certificate and private key — as one record.
    ///
    /// - Returns: The persistent references of the certificate and the key.
    /// - Throws: `KeychainError.duplicateItem` if either already exists.
    @discardableResult
    public func add(_ identity: Identity) throws(KeychainError) -> (certificate: PersistentReference, privateKey: PersistentReference) {
        try batch { (batch) throws(KeychainError) in try batch.add(identity) }
    }

    /// Finds typed items of one class.
    ///
    /// For example:
    /// ```swift
    /// let passwords = try keychain.find(GenericPassword.self, matching: .genericPassword(service: "mail"))
    /// ```
    ///
    /// - Parameters:
    ///   - type: The item type; it must match the query's class.
    ///   - query: What to match; its `limit` applies.
    ///   - loadingValues: Whether to decrypt and fill in each item's secret (`value`).
    /// - Returns: The matching items, never empty.
    /// - Throws: `KeychainError.itemNotFound` if nothing matches; `.invalidParameter` if the query's class is
    ///   not `type`'s.
    @inlinable
    public func find<Item: KeychainItem>(
        _ type: Item.Type, matching query: Query, loadingValues: Bool = true
    ) throws(KeychainError) -> [Item] {
        // Inlinable, so that a caller's `find(GenericPassword.self, …)` is specialised: unspecialised, each
        // result costs generic metadata look-ups and value-witness copies. The work is in `forEachMatch`.
        var items: [Item] = []
        try forEachMatch(of: query, typeName: "\(Item.self)", itemClass: Item.itemClass, loadingValues: loadingValues) {
            (attributes, value) throws(KeychainError) in
            items.append(try Item(attributes: attributes, value: value))
        }
        return items
    }

    /// The core of ``find(_:matching:loadingValues:)``: calls `body` with the attributes and (when
    /// `loadingValues`) the secret of each item the query matches, in the order `search` returns them; one
    /// item at most for a query with limit one. `body` runs after the keychain's lock is released.
    ///
    /// - Throws: `KeychainError.invalidParameter` if the query's class is not `itemClass` (naming
    ///   `typeName`) or the query is not valid; `.itemNotFound` if nothing matches; what `body` throws.
    @usableFromInline
    func forEachMatch(
        of query: Query, typeName: @autoclosure () -> String, itemClass: ItemClass, loadingValues: Bool,
        _ body: (ItemAttributes, [UInt8]?) throws(KeychainError) -> Void
    ) throws(KeychainError) {
        guard query.itemClass.itemClass == itemClass else {
            throw .invalidParameter("\(typeName()) cannot be found with a query for \(query.itemClass)")
        }
        // The matches are gathered under the lock and handed to `body` after it: `body` builds items with the
        // caller's `KeychainItem` initialiser, which may itself use this keychain.
        let matches = try withRead { () throws(KeychainError) -> [(attributes: ItemAttributes, value: [UInt8]?)] in
            var matches: [(attributes: ItemAttributes, value: [UInt8]?)] = []
            try withIndexInPlace { (index) throws(KeychainError) in
                try index.forEachMatch(of: query) { (item) throws(KeychainError) -> Bool in
                    matches.append((item.attributes.detached(), loadingValues ? try log.decryptSecret(of: item) : nil))
                    return query.limit != .one
                }
            }
            return matches
        }
        guard !matches.isEmpty else { throw .itemNotFound }
        for match in matches { try body(match.attributes, match.value) }
    }

    /// Finds identities: certificates joined with their private keys.
    ///
    /// - Parameters:
    ///   - query: An identity query (class ``QueryClass/identity``).
    ///   - loadingValues: Whether to decrypt the certificates' DER and the keys' bytes.
    /// - Returns: The matching identities, never empty.
    /// - Throws: `KeychainError.itemNotFound` if nothing matches.
    public func findIdentities(matching query: Query = Query(.identity), loadingValues: Bool = true) throws(KeychainError) -> [Identity] {
        guard query.itemClass == .identity else { throw .invalidParameter("findIdentities needs an identity query") }
        let results = try search(query, returning: loadingValues ? [.attributes, .data] : [.attributes])
        var identities: [Identity] = []
        for result in results {
            guard let certificateAttributes = result.attributes, let keyAttributes = result.privateKey?.attributes else { continue }
            identities.append(try Identity(
                certificate: try Certificate(attributes: certificateAttributes, value: result.value),
                privateKey: try Key(attributes: keyAttributes, value: result.privateKey?.value)))
        }
        return identities
    }
}
