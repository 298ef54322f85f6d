extension MergeEntry {
    /// A copy's entries: each live item with its secret decrypted, and each tombstone the file keeps (SPEC.md §43.2).
    static func entries(
        of items: [StoredItem], tombstones: [ItemID: Int64], decryptSecret: (StoredItem) throws(KeychainError) -> [UInt8]
    ) throws(KeychainError) -> [ItemID: MergeEntry] {
        var entries: [ItemID: MergeEntry] = [:]
        entries.reserveCapacity(items.count + tombstones.count)
        for item in items {
            let version = MergeVersion(id: item.id, attributes: item.attributes.detached(), secret: try decryptSecret(item))
            entries[item.id] = MergeEntry(version: version)
        }
        for (id, time) in tombstones {
            entries[id, default: MergeEntry()].tombstone = time
        }
        return entries
    }
}
