/// The entries a rewrite writes (version 2 and 3, SPEC.md §26.6): the items in the order given, then the
/// tombstones it keeps, oldest first, handed to `commit` in batches of at most 4,096 entries and about 4 MiB, so
/// that neither a file of any size nor its plaintext secrets are ever held whole in memory.
enum RewriteEntries {
    /// Calls `commit` with each batch; `commit` wipes and empties it.
    ///
    /// - Parameters:
    ///   - item: the item of each rank, `0 ..< itemCount`.
    ///   - decryptSecret: an item's secret, sealed anew in the new file.
    ///   - copiedSecretBox: when given, an item's secret box as it is, copied instead (the same keys and item ids).
    ///   - tombstones: deletions kept, by item, with their times.
    static func forEachBatch(
        itemCount: Int, item: (Int) -> StoredItem, decryptSecret: (StoredItem) throws(KeychainError) -> [UInt8],
        copiedSecretBox: ((StoredItem) -> [UInt8])?, tombstones: [ItemID: Int64],
        commit: (inout [EntryV2]) throws(KeychainError) -> Void
    ) throws(KeychainError) {
        var entries: [EntryV2] = []
        var bytes = 0
        var reported = -1
        for rank in 0..<itemCount {
            let stored = item(rank)
            if let copiedSecretBox {
                let box = copiedSecretBox(stored)
                bytes += box.count + stored.attributes.encoded.count + 36
                entries.append(.copy(id: stored.id, attributes: stored.attributes, secretBox: box))
            } else {
                let secret = try decryptSecret(stored)
                bytes += secret.count + stored.attributes.encoded.count + 64
                entries.append(.put(id: stored.id, attributes: stored.attributes, secret: secret))
            }
            if entries.count >= 4_096 || bytes >= 4 << 20 {
                try commit(&entries)
                ProgressReporting.itemsWritten(rank + 1, of: itemCount)
                reported = rank + 1
                bytes = 0
            }
        }
        if !entries.isEmpty { try commit(&entries) }
        if reported != itemCount { ProgressReporting.itemsWritten(itemCount, of: itemCount) }
        for (id, time) in tombstones.sorted(by: { $0.value != $1.value ? $0.value < $1.value : $0.key.bytes.lexicographicallyPrecedes($1.key.bytes) }) {
            entries.append(.tombstone(id: id, time: time))
            if entries.count >= 4_096 { try commit(&entries) }
        }
        if !entries.isEmpty { try commit(&entries) }
    }
}
