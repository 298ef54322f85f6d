/// What the reader of a record computes for each put beside opening its boxes, for whoever applies the
/// entries: the decoder is generic over it, so that the index's hashing (``ItemDigests``) runs on the threads
/// that decrypt, while this layer knows nothing of the index.
protocol EntryDigests: Sendable {
    /// The digests of the put of item `id` with `attributes`.
    init(id: ItemID, attributes: ItemAttributes)
}

/// No digests: for a reader that only collects a record's entries.
struct NoEntryDigests: EntryDigests {
    init(id: ItemID, attributes: ItemAttributes) {}
}
