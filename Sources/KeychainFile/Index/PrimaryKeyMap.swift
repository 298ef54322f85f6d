/// Which live item holds each primary key (SPEC.md §8.3), for the uniqueness checks of every add, update
/// and replayed record.
///
/// Keyed by the key's hash value (the standard library's `Hasher`, seeded at random per process) rather than
/// by the key, so that the map holds no copy of each item's key bytes: a digest only names candidates, and
/// the holder is the candidate whose own primary key, computed from its attributes, equals the key asked
/// for. The answer is therefore exact whatever the digests do; a collision costs one more comparison.
struct PrimaryKeyMap: Sendable {
    private var buckets: [Int: ItemIDBucket] = [:]
    /// The key's hash value; tests replace it with one that collides.
    private let digest: @Sendable (PrimaryKey) -> Int

    init(digest: @escaping @Sendable (PrimaryKey) -> Int = { $0.hashValue }) {
        self.digest = digest
    }

    /// The live item whose primary key is `key`, if any; `item` gives the live item with an id.
    func holder(of key: PrimaryKey, among item: (ItemID) -> StoredItem?) -> ItemID? {
        switch buckets[digest(key)] {
        case nil: return nil
        case .one(let id): return item(id)?.attributes.primaryKey == key ? id : nil
        case .many(let ids): return ids.first { item($0)?.attributes.primaryKey == key }
        }
    }

    /// Records that `id` holds `key`.
    mutating func insert(_ key: PrimaryKey, holder id: ItemID) {
        let digest = digest(key)
        if buckets[digest]?.insert(id) == nil { buckets[digest] = .one(id) }
    }

    /// Forgets that `id` holds `key`; nothing happens if it was not recorded.
    mutating func remove(_ key: PrimaryKey, holder id: ItemID) {
        let digest = digest(key)
        if buckets[digest]?.remove(id) == false { buckets.removeValue(forKey: digest) }
    }

    mutating func reserveCapacity(forMoreItems count: Int) {
        buckets.reserveCapacity(buckets.count + count)
    }
}
