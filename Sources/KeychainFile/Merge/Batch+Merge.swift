extension Batch {
    /// The items this batch sees, each with its secret decrypted, and `tombstones`: what a merge reads of the copy
    /// it writes into.
    func mergeEntries(tombstones: [ItemID: Int64]) throws(KeychainError) -> [ItemID: MergeEntry] {
        try MergeEntry.entries(of: state.itemsInAddedOrder(), tombstones: tombstones, decryptSecret: decryptSecret)
    }
}
