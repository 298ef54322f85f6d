/// Which live item holds each primary key (SPEC.md §8.3), for the uniqueness checks of every add, update
/// and replayed record.
///
/// Keyed by the key's hash value (the standard library's `Hasher`, seeded at random per process) rather than
/// by the key, so that the map holds no copy of each item's key bytes: a digest only names candidates, and
/// the holder is the candidate whose own primary key, computed from its attributes, equals the key asked
/// for. The answer is therefore exact whatever the digests do; a collision costs one more comparison.
struct PrimaryKeyMap: Sendable {
    /// Digest → positions of the holders in the ``ItemIndex``'s pages.
    private var buckets = DigestTable()
    private let digest: @Sendable (PrimaryKey) -> Int
    /// Whether `digest` is the standard library's hash value, which ``ItemDigests`` computes in advance.
    private let usesStandardDigest: Bool

    /// A map keyed by the keys' standard hash values.
    init() {
        digest = { $0.hashValue }
        usesStandardDigest = true
    }

    /// A map whose digests `digest` computes (tests pass one that collides).
    init(digest: @escaping @Sendable (PrimaryKey) -> Int) {
        self.digest = digest
        usesStandardDigest = false
    }

    /// The digest this map keys the primary key of an item with `attributes` by: the one `digests` computed in
    /// advance when the map uses the standard hash value, else its own.
    func digest(of digests: ItemDigests, attributes: ItemAttributes) -> Int {
        usesStandardDigest ? digests.standardPrimaryKeyDigest : digest(attributes.primaryKey)
    }

    /// Whether any live item's primary key has the digest `keyDigest` in this map: when none has, no item holds
    /// a key with that digest, and no holder need be looked for.
    func hasCandidates(digest keyDigest: Int) -> Bool {
        buckets.contains(keyDigest)
    }

    /// The position of the live item whose primary key is `key`, if any; `item` gives the live item at a
    /// position.
    func holder(of key: PrimaryKey, among item: (Int) -> StoredItem) -> Int? {
        holder(of: key, digest: digest(key), among: item)
    }

    /// As ``holder(of:among:)``, with the key's digest in this map given.
    func holder(of key: PrimaryKey, digest keyDigest: Int, among item: (Int) -> StoredItem) -> Int? {
        var found: Int? = nil
        buckets.forEachPosition(keyDigest) { position in
            if item(position).attributes.primaryKey == key { found = position }
            return found == nil
        }
        return found
    }

    /// The position of the live item whose primary key is that of an item with `attributes`, given that key's
    /// digest in this map (``digest(of:attributes:)``); the key itself is made only if the digest names a
    /// candidate.
    func holder(ofKeyOf attributes: ItemAttributes, digest keyDigest: Int, among item: (Int) -> StoredItem) -> Int? {
        var key: PrimaryKey? = nil
        var found: Int? = nil
        buckets.forEachPosition(keyDigest) { position in
            let wanted = key ?? attributes.primaryKey
            key = wanted
            if item(position).attributes.primaryKey == wanted { found = position }
            return found == nil
        }
        return found
    }

    /// Records that the item at `position` holds `key`.
    mutating func insert(_ key: PrimaryKey, holder position: Int) {
        buckets.insert(digest(key), position)
    }

    /// Records that the item at `position` holds the key whose digest in this map is `keyDigest`.
    mutating func insert(digest keyDigest: Int, holder position: Int) {
        buckets.insert(keyDigest, position)
    }

    /// Forgets that the item at `position` holds `key`.
    mutating func remove(_ key: PrimaryKey, holder position: Int) {
        buckets.remove(digest(key), position)
    }

    /// Follows the holder of `key` from position `old` to `new`.
    mutating func move(_ key: PrimaryKey, from old: Int, to new: Int) {
        buckets.move(digest(key), from: old, to: new)
    }

    /// Makes room for `count` more items without rehashing.
    mutating func reserveCapacity(forMoreItems count: Int) {
        buckets.reserveCapacity(forMore: count)
    }
}
