/// The items under one key of a hash map (a lookup index, the primary-key map): most keys name one item,
/// which is kept without allocating a set.
enum ItemIDBucket: Sendable {
    case one(ItemID)
    case many(Set<ItemID>)

    mutating func insert(_ id: ItemID) {
        switch self {
        case .one(let existing):
            if existing != id { self = .many([existing, id]) }
        case .many(var ids):
            // Drop this enum's reference first, so that the set is unique and changes in place.
            self = .one(id)
            ids.insert(id)
            self = .many(ids)
        }
    }

    /// Removes `id`; returns false if the bucket is then empty.
    mutating func remove(_ id: ItemID) -> Bool {
        switch self {
        case .one(let existing):
            return existing != id
        case .many(var ids):
            self = .one(id)
            ids.remove(id)
            if ids.count == 1, let last = ids.first {
                self = .one(last)
            } else {
                self = .many(ids)
            }
            return !ids.isEmpty
        }
    }
}
