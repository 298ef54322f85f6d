// Version 3's groups in a replay (Docs/FormatVersion3.md §2.11).
extension ReplayV2 {
    /// Checks each put, deletion and tombstone of `record` against the group its item is live in at that point of
    /// the transaction (as SPEC.md §24.4 judges "live": across the transaction's parts): a put of an item live in
    /// another group without its deletion there first, or a deletion or tombstone of an item live in another group,
    /// is `corrupted`. Only a writer holding both groups' keys can make one, and the two groups' holders would then
    /// disagree; the record authenticated, so it is refused wherever it lies.
    ///
    /// - Parameters:
    ///   - keyIDs: each followed group's key id, by name.
    ///   - touched: the group of each item the transaction touched before `record` (0: deleted by it); updated.
    func checkGroups(
        of record: ReplayedRecordV2, keyIDs: [String: UInt8], touched: inout [ItemID: UInt8], at position: Int
    ) throws(KeychainError) {
        for placement in record.placements {
            let live: UInt8?
            if let keyID = touched[placement.id] {
                live = keyID == 0 ? nil : keyID
            } else {
                live = index[placement.id].flatMap { keyIDs[AccessGroupsV3.name(of: $0.attributes)] }
            }
            if let live, live != placement.keyID {
                let what: String
                switch placement.kind {
                case .put: what = "puts"
                case .delete: what = "deletes"
                case .tombstone: what = "holds a tombstone of"
                }
                throw .corrupted(
                    offset: position,
                    reason: "record \(record.sequence): a page of key id \(placement.keyID) \(what) item \(HexText.lowercase(placement.id.bytes)), which is live in key id \(live)'s pages")
            }
            switch placement.kind {
            case .put: touched[placement.id] = placement.keyID
            case .delete: touched[placement.id] = 0
            case .tombstone: continue
            }
        }
    }
}
