#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A set of operations that commit together as one record: what `Keychain.batch` exposes, and what every
/// single add, update and delete uses internally.
///
/// Operations apply in order, each seeing the effects of those before it. Nothing is written until the
/// batch commits; if any operation throws, nothing is written at all.
///
/// For example:
/// ```swift
/// try keychain.batch { batch in
///     try batch.add(GenericPassword(service: "mail", account: "ann", password: "one"))
///     try batch.add(GenericPassword(service: "mail", account: "bob", password: "two"))
///     try batch.deleteIfPresent(.genericPassword(service: "old"))   // delete(_:) throws if there is none
/// }
/// ```
public struct Batch: ~Copyable {
    /// The keychain's items with this batch's operations applied: the keychain's own index, moved in for
    /// the batch (so that staging an operation costs what the operation touches, not a copy of every item)
    /// and handed back by ``finish(committed:)``.
    var state: ItemIndex
    /// The entries staged, in order, before `trailingAdds`.
    private var entries: [LogEntry] = []
    /// The positions in `state` of the items of the plain adds (see ``add(_:secret:)``) staged after `entries`,
    /// which are kept as nothing else: a bulk load's adds keep no ``LogEntry`` and no id besides the index's
    /// (see ``BatchEntries``). The items are the last in `state`, since a plain add appends its item and
    /// anything else staged first makes these into `entries` (`keepTrailingAdds`).
    private var trailingAdds: Range<Int>
    /// Where in `entries` the latest put of each item this batch put (and did not delete since) is: how an
    /// update finds the plaintext secret of an item whose stored secret is not sealed yet. Built the first
    /// time an update needs it, then kept up to date, so that a batch of adds (a bulk load) keeps no map of
    /// its items.
    private var latestPuts: [ItemID: Int]? = nil
    /// Every item this batch touched that existed before it, as it was: what undoing the batch puts back.
    private var originals: [ItemID: StoredItem] = [:]
    /// Every item this batch added (absent before it) but those of `trailingAdds`, in the order added; what
    /// undoing the batch removes. An array, not a set: whether an item was added by this batch is told by its
    /// order number instead (see `isAddedByThisBatch`), so recording an add is an append.
    private var added: [ItemID] = []
    private let originalNextOrder: UInt64
    let now: Date
    let makeID: () -> ItemID
    let decryptSecret: (StoredItem) throws(KeychainError) -> [UInt8]
    /// The access groups the keychain's credential reaches; `nil` for the whole keychain (``CredentialScope``).
    let scope: [String]?

    init(state: ItemIndex, now: Date, makeID: @escaping () -> ItemID,
         decryptSecret: @escaping (StoredItem) throws(KeychainError) -> [UInt8], scope: [String]? = nil) {
        self.state = state
        self.scope = scope
        trailingAdds = 0..<0
        originalNextOrder = state.nextOrder
        self.now = now
        self.makeID = makeID
        self.decryptSecret = decryptSecret
    }

    /// Whether `id` is live because this batch added it: items live before the batch are numbered below
    /// `originalNextOrder`, and every item the batch adds is numbered from there on.
    private func isAddedByThisBatch(_ id: ItemID) -> Bool {
        guard let order = state[id]?.order else { return false }
        return order >= originalNextOrder
    }

    /// A placeholder for the sealed secret of an item put in this batch; replaced when the batch is sealed.
    private static let unsealed = SealedSecret(box: [], sequence: 0, kind: .put, entryCount: 0, entryIndex: 0, previousChain: [])

    /// Adds an item given as its class, attributes and secret.
    ///
    /// - Parameters:
    ///   - attributes: The item's attributes; defaults are filled in (SPEC.md §8.2) and the dates set.
    ///   - secret: The secret value, at most 1 MiB.
    /// - Returns: The new item's persistent reference.
    /// - Throws: `KeychainError.duplicateItem` if an item with the same primary key exists;
    ///   `.invalidParameter` for a date attribute (the keychain keeps them) or a secret over the limit;
    ///   `.missingEntitlement` for an access group the keychain's scoped credential does not reach.
    @discardableResult
    public mutating func add(_ attributes: ItemAttributes, secret: [UInt8]) throws(KeychainError) -> PersistentReference {
        guard attributes[.creationDate] == nil, attributes[.modificationDate] == nil else {
            throw .invalidParameter("creationDate and modificationDate are kept by the keychain and cannot be set")
        }
        guard secret.count <= Format.maximumSecretSize else {
            throw .invalidParameter("the secret is \(secret.count) bytes; the limit is 1,048,576")
        }
        guard let milliseconds = AttributeValue.milliseconds(of: now) else {
            throw .invalidParameter("creationDate: date too far from 1970 for 64-bit milliseconds")
        }
        let defaulted = attributes.withDefaults()
        try Keychain.checkScope(group: AccessGroupsV3.name(of: defaulted), within: scope, operation: "adding an item")
        // The dates are not part of the primary key.
        let primaryKey = defaulted.primaryKey
        guard state.itemID(for: primaryKey) == nil else { throw .duplicateItem }
        // The item's one heap block: the dated attributes, and the secret where the encoder seals it in place
        // (see ItemBytes); the batch keeps no array per secret.
        let stamped = defaulted.reservingWithDates(created: milliseconds, modified: milliseconds, secret: secret)
        let id = makeID()
        if state[id] == nil {
            // A new id and a free primary key: nothing to plan, so the item goes straight into the index, at
            // its end, and is all the batch keeps of the add.
            let position = state.count
            assert(trailingAdds.isEmpty || trailingAdds.upperBound == position)
            state.insertNew(id, attributes: stamped, secret: Batch.unsealed, primaryKey: primaryKey)
            trailingAdds = (trailingAdds.isEmpty ? position : trailingAdds.lowerBound)..<state.count
        } else {
            try stage(.put(id: id, attributes: stamped, secret: .inReservedBlock(count: secret.count)))
        }
        return PersistentReference(itemID: id)
    }

    /// Changes every item the query matches: sets the given attributes and, if `secret` is given, the secret.
    ///
    /// - Returns: The number of items changed (at least 1).
    /// - Throws: `KeychainError.itemNotFound` if nothing matches; `.duplicateItem` if a change would give two
    ///   items the same primary key; `.invalidParameter` for attributes not allowed in the class;
    ///   `.missingEntitlement` when the query, or the access group set, is one a scoped credential does not reach.
    @discardableResult
    public mutating func update(
        _ query: Query, setting changes: [Attribute: AttributeValue], secret: [UInt8]? = nil
    ) throws(KeychainError) -> Int {
        guard query.itemClass != .identity else {
            throw .invalidParameter("identities cannot be updated as a whole; update the certificate or the key")
        }
        guard changes[.creationDate] == nil, changes[.modificationDate] == nil else {
            throw .invalidParameter("creationDate and modificationDate are kept by the keychain and cannot be set")
        }
        if let secret, secret.count > Format.maximumSecretSize {
            throw .invalidParameter("the secret is \(secret.count) bytes; the limit is 1,048,576")
        }
        try Keychain.checkScope(query, within: scope, operation: "updating items")
        if case .string(let group)? = changes[.accessGroup] {
            try Keychain.checkScope(group: group, within: scope, operation: "moving items to another access group")
        }
        let matches = try matching(query)
        guard !matches.isEmpty else { throw .itemNotFound }
        var puts: [LogEntry] = []
        for item in matches {
            var attributes = item.attributes
            for (attribute, value) in changes.sorted(by: { $0.key.tag < $1.key.tag }) {
                attributes = try attributes.setting(attribute, to: value)
            }
            attributes = try attributes.setting(.modificationDate, to: .date(now))
            let newSecret: [UInt8]
            if let secret {
                newSecret = secret
            } else if let pending = pendingSecret(of: item.id) {
                newSecret = pending
            } else {
                newSecret = try decryptSecret(item)
            }
            puts.append(.put(id: item.id, attributes: attributes, secret: .bytes(newSecret)))
        }
        try stage(puts)
        return matches.count
    }

    /// Deletes every item the query matches (for an identity: its certificate and its private key).
    ///
    /// - Returns: The number of items deleted (at least 1).
    /// - Throws: `KeychainError.itemNotFound` if nothing matches; `.missingEntitlement` when the query names an
    ///   access group a scoped credential does not reach.
    @discardableResult
    public mutating func delete(_ query: Query) throws(KeychainError) -> Int {
        let count = try deleteIfPresent(query)
        guard count > 0 else { throw .itemNotFound }
        return count
    }

    /// Deletes every item the query matches, if any: ``delete(_:)`` for when nothing there is as good as
    /// deleted. Removing what may be missing is then a choice written in the code, not an error caught.
    ///
    /// For example:
    /// ```swift
    /// try keychain.batch { batch in
    ///     try batch.add(GenericPassword(service: "mail.example.com", account: "ann", password: "new"))
    ///     try batch.deleteIfPresent(.genericPassword(service: "mail.example.org", account: "ann"))
    /// }
    /// ```
    ///
    /// - Returns: The number of items deleted; 0 if nothing matched (and nothing is written for it).
    /// - Throws: `KeychainError.invalidParameter` for a query that is not valid; `.missingEntitlement` when it
    ///   names an access group a scoped credential does not reach.
    @discardableResult
    public mutating func deleteIfPresent(_ query: Query) throws(KeychainError) -> Int {
        try Keychain.checkScope(query, within: scope, operation: "deleting items")
        var ids: [ItemID] = []
        if query.itemClass == .identity {
            for identity in try identities(matching: query) {
                ids.append(identity.certificate.id)
                if !ids.contains(identity.privateKey.id) { ids.append(identity.privateKey.id) }
            }
        } else {
            ids = try matching(query).map(\.id)
        }
        guard !ids.isEmpty else { return 0 }
        try stage(ids.map { LogEntry.delete(id: $0) })
        return ids.count
    }

    // MARK: Searching the staged state

    /// The live items a (non-identity) query matches, in the order they were added.
    func matching(_ query: Query) throws(KeychainError) -> [StoredItem] {
        try state.matching(query)
    }

    /// The identities a query matches: certificates joined with the private keys whose application label
    /// is the certificate's public key hash (SPEC.md §8.1).
    func identities(matching query: Query) throws(KeychainError) -> [(certificate: StoredItem, privateKey: StoredItem)] {
        try query.validate()
        var result: [(certificate: StoredItem, privateKey: StoredItem)] = []
        let matcher = Query.Matcher(query)
        for certificate in state.items(of: .certificate, where: { matcher.matches($0) }) {
            guard let hash = certificate.attributes.bytes(.publicKeyHash), !hash.isEmpty else { continue }
            // The private keys labelled with the certificate's public key hash, found through the index.
            var keys = Query(.key)
            keys.attributes = [.applicationLabel: .bytes(hash), .keyClass: .integer(KeyClass.privateKey.rawValue)]
            keys.synchronizable = .any
            for key in state.items(matching: keys, of: .key)
            where query.matchesIdentity(certificate: certificate.attributes, privateKey: key.attributes) {
                if let reference = query.persistentReference,
                   reference.itemID != certificate.id && reference.itemID != key.id { continue }
                result.append((certificate, key))
            }
        }
        return result
    }

    // MARK: Staging

    private mutating func stage(_ entry: LogEntry) throws(KeychainError) {
        try stage([entry])
    }

    mutating func stage(_ newEntries: [LogEntry]) throws(KeychainError) {
        // What is staged now may remove or change items, moving the trailing adds' items in the index.
        keepTrailingAdds()
        let decoded: [DecodedEntry] = newEntries.compactMap { entry in
            switch entry {
            case .put(let id, let attributes, _): return .put(id: id, attributes: attributes, secret: Batch.unsealed)
            case .delete(let id), .deletion(let id, _): return .delete(id: id)
            case .tombstone: return nil
            }
        }
        // A tombstone entry changes no item, but a version 3 log puts it in the page of the group its item was live
        // in before the batch (SPEC.md §36): that group is read from `originals`.
        for case .tombstone(let id, _, _) in newEntries where originals[id] == nil && !isAddedByThisBatch(id) {
            if let original = state[id] { originals[id] = original }
        }
        for entry in decoded {
            let id: ItemID
            switch entry {
            case .put(let put, _, _): id = put
            case .delete(let deleted): id = deleted
            }
            if originals[id] == nil && !isAddedByThisBatch(id) {
                if let original = state[id] { originals[id] = original } else { added.append(id) }
            }
        }
        do {
            try state.apply(decoded)
        } catch {
            switch error {
            case .duplicatePrimaryKey: throw .duplicateItem
            case .unknownItem: throw .itemNotFound
            case .classChange: throw .invalidParameter("an item cannot change its class")
            }
        }
        entries.append(contentsOf: newEntries)
        noteStaged(from: entries.count - newEntries.count)
    }

    /// The plaintext secret of the latest put of `id` in this batch, if it put the item and did not delete it
    /// since.
    private mutating func pendingSecret(of id: ItemID) -> [UInt8]? {
        keepTrailingAdds()
        if latestPuts == nil {
            latestPuts = [:]
            noteStaged(from: 0)
        }
        guard let index = latestPuts?[id], case .put(_, let attributes, let secret) = entries[index] else { return nil }
        return secret.plaintext(attributes: attributes)
    }

    /// Makes the trailing adds into entries of their own (and their ids into `added`), so that staging
    /// something after them cannot lose them: it may remove or replace their items in the index.
    private mutating func keepTrailingAdds() {
        guard !trailingAdds.isEmpty else { return }
        let start = entries.count
        entries.reserveCapacity(start + trailingAdds.count)
        added.reserveCapacity(added.count + trailingAdds.count)
        for position in trailingAdds {
            let item = state.item(atPosition: position)
            entries.append(BatchEntries.plainAdd(item))
            added.append(item.id)
        }
        trailingAdds = 0..<0
        noteStaged(from: start)
    }

    /// Records the entries from `start` on in `latestPuts`, once it exists.
    private mutating func noteStaged(from start: Int) {
        guard latestPuts != nil else { return }
        for index in start..<entries.count {
            switch entries[index] {
            case .put(let id, _, _): latestPuts?[id] = index
            case .delete(let id), .deletion(let id, _): latestPuts?[id] = nil
            case .tombstone: break
            }
        }
    }

    // MARK: Finishing

    /// Whether nothing was staged.
    var isEmpty: Bool { entries.isEmpty && trailingAdds.isEmpty }

    /// Has `body` seal the staged entries (it gets them in order, and each changed item as it was before the batch)
    /// and returns what it returns; nil, without calling it, when nothing was staged. The entries hold the batch's index while `body` runs; the batch
    /// changes nothing until it returns.
    func sealing(
        _ body: (BatchEntries, _ before: (ItemID) -> StoredItem?) throws(KeychainError) -> AppendedSecrets
    ) throws(KeychainError) -> AppendedSecrets? {
        guard !isEmpty else { return nil }
        // An item the batch changed was live before it exactly when the batch kept its original.
        return try body(BatchEntries(kept: entries, index: state, trailingAdds: trailingAdds), { originals[$0] })
    }

    /// Hands the items back: with the batch's operations and the sealed secrets of `written` (the record of
    /// its entries; nil when there were none), or — `committed` false — as they were before the batch.
    mutating func finish(committed: Bool, written: AppendedSecrets?) -> ItemIndex {
        // Moved out rather than copied, so that the changes below do not copy every item.
        var state = ItemIndex()
        swap(&state, &self.state)
        guard committed else {
            // The trailing adds' items are the last in the index: taken out from the end, none moves another.
            for position in trailingAdds.reversed() {
                let item = state.item(atPosition: position)
                item.attributes.encoded.storage.wipeReserved()
                state.restore(item.id, to: nil)
            }
            for id in added { state.restore(id, to: nil) }
            for (id, original) in originals { state.restore(id, to: original) }
            state.nextOrder = originalNextOrder
            // Secrets kept in blocks that will never be sealed are not left behind in plaintext.
            for case .put(_, let attributes, .inReservedBlock) in entries { attributes.encoded.storage.wipeReserved() }
            return state
        }
        if let written {
            var put = 0
            for case .put(let id, _, _) in entries {
                guard put < written.count else { break }
                state.replaceSecret(of: id, with: written.secret(put))
                put += 1
            }
            for position in trailingAdds {
                guard put < written.count else { break }
                state.replaceSecret(atPosition: position, with: written.secret(put))
                put += 1
            }
        }
        return state
    }
}
