/// The digests an item is entered under in the ``ItemIndex``'s tables — its id's, its primary key's and
/// those of its lookup keys — computed from its id and attributes alone.
///
/// Computing them is most of the hashing an item costs the index. A replay computes them on the thread that
/// decoded the item's attributes (``WindowedRecordDecoder``, beside the decryption), so that the calling
/// thread, which applies every entry in file order and on which a large open waits, only enters them in the
/// tables; an item added or replayed one by one computes them once where it is inserted.
///
/// Only integers: nothing here is allocated by the thread that computes it and freed by the one that enters
/// it, which glibc's per-thread arenas make costly (the primary key is hashed from scratch memory, never made
/// into a ``PrimaryKey``; the index makes one only to compare with a holder the digest names).
struct ItemDigests: EntryDigests, Equatable {
    /// The digest the id table keys the item by.
    let id: Int
    /// The primary key's digest with the standard library's `Hasher`: the digest of a ``PrimaryKeyMap`` that
    /// was not given another (``PrimaryKeyMap/digest(of:attributes:)`` decides).
    let standardPrimaryKeyDigest: Int
    /// The digests of the item's lookup keys.
    let lookup: LookupIndex.Digests

    /// The digests of the item `id` with `attributes`.
    init(id: ItemID, attributes: ItemAttributes) {
        self.id = ItemIndex.digest(id)
        standardPrimaryKeyDigest = attributes.primaryKeyHashValue
        lookup = LookupIndex.digests(of: attributes)
    }

    /// The digests of the item `id` with `attributes`, whose primary key the caller has made already.
    init(id: ItemID, attributes: ItemAttributes, primaryKey: PrimaryKey) {
        self.id = ItemIndex.digest(id)
        standardPrimaryKeyDigest = primaryKey.hashValue
        lookup = LookupIndex.digests(of: attributes)
    }
}
