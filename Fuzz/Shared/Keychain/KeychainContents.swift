@testable import KeychainFile

/// What a keychain holds, compared across reopening, appending, compaction, salvage and catching up.
struct KeychainContents: Equatable {
    struct Item: Equatable {
        let id: ItemID
        let attributes: ItemAttributes
        let secret: [UInt8]

        /// Compared as the bytes a writer stores, so that no value can change unnoticed.
        static func == (lhs: Item, rhs: Item) -> Bool {
            lhs.id == rhs.id && lhs.secret == rhs.secret
                && AttributeCoding.encode(id: lhs.id, attributes: lhs.attributes)
                    == AttributeCoding.encode(id: rhs.id, attributes: rhs.attributes)
        }
    }

    /// Live items in the order they were first added.
    let items: [Item]

    /// The live items by id, for formats whose rewrite does not keep the added order.
    var itemsByID: [String: Item] {
        Dictionary(items.map { ("\($0.id)", $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Every item with its secret read. The replay verified each secret box, so reading it must succeed, and
    /// `Version` checks what the read itself does not (``FormatChecks/checkSecret(_:of:in:)``): an item that
    /// opened and does not read back, or reads other bytes than its verified box holds, is a finding.
    init<Version: FormatChecks>(of keychain: Keychain, _: Version.Type) {
        let (index, log) = keychain.withLock { (keychain.index, keychain.log) }
        var items: [Item] = []
        for stored in index.itemsInAddedOrder() {
            // The index's tables (ids, primary keys) find every item it holds, and only that item.
            Invariant.check(index[stored.id]?.id == stored.id, "item \(stored.id) is not found by its id")
            Invariant.check(
                index.itemID(for: stored.attributes.primaryKey) == stored.id, "item \(stored.id) is not found by its primary key")
            do {
                let secret = try keychain.secret(for: PersistentReference(itemID: stored.id))
                try Version.checkSecret(secret, of: stored, in: log)
                items.append(Item(id: stored.id, attributes: stored.attributes, secret: secret))
            } catch {
                Invariant.check(false, "the secret of item \(stored.id), verified during replay, does not read back: \(error)")
            }
        }
        self.items = items
    }
}
