@testable import KeychainFile

/// What a version 2 keychain holds, compared across reopening, appending, compaction and catching up.
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

    /// Every item with its secret decrypted. The replay checked each secret box's tag against the one its page
    /// names; decrypting it (which checks the tag again, over the whole box) must then succeed: an item that
    /// opened and does not read back is a finding.
    init(of keychain: Keychain) {
        let index = keychain.withLock { keychain.index }
        var items: [Item] = []
        for stored in index.itemsInAddedOrder() {
            // The index's tables (ids, primary keys) find every item it holds, and only that item.
            Invariant.check(index[stored.id]?.id == stored.id, "item \(stored.id) is not found by its id")
            Invariant.check(
                index.itemID(for: stored.attributes.primaryKey) == stored.id, "item \(stored.id) is not found by its primary key")
            do {
                items.append(Item(id: stored.id, attributes: stored.attributes, secret: try keychain.secret(for: PersistentReference(itemID: stored.id))))
            } catch {
                Invariant.check(false, "the secret of item \(stored.id), verified during replay, does not read back: \(error)")
            }
        }
        self.items = items
    }
}
