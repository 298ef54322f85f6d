extension Keychain {
    /// Merges another copy of this keychain into this one, in one transaction (SPEC.md §43).
    ///
    /// Items are matched by item id. With `base` (the copy both came from), a change made on one side only is taken
    /// and a deletion made on one side only is taken; without it, the file's tombstones tell a deletion from an
    /// addition, and each item is settled by its versions' times. An item changed on both sides keeps the newer
    /// version and keeps the other as a conflict copy (``conflictCopies()``); two different items that end with one
    /// primary key keep the newer, the other becoming a conflict copy. Nothing acknowledged on either side is
    /// dropped: every version either is the item, is a conflict copy, or was followed by a later change or deletion.
    /// This keychain keeps its own credentials; `other` and `base` are only read.
    ///
    /// Merging is commutative (up to the credentials kept) and idempotent: merging a copy into itself, or merging the
    /// same copy twice, changes nothing the second time. It is associative when no two items end with one primary
    /// key; where they do, two orders of merges keep the same versions but may differ in which item keeps the key
    /// (SPEC.md §43.7). Without `base`, a change and a deletion are ordered by their modification times, so a machine
    /// whose clock is behind can lose a change to an earlier deletion: the report lists each such version
    /// (``MergeReport/overruled``).
    ///
    /// For example:
    /// ```swift
    /// let ours = try Keychain.open(at: "laptop.kcf", credential: .password("pw"))
    /// let theirs = try Keychain.open(at: "laptop.sync-conflict-20261129-101500-ABC.kcf", credential: .password("pw"))
    /// let report = try ours.merge(from: theirs)
    /// print(report.conflicts.count)
    /// ```
    ///
    /// - Parameters:
    ///   - other: The copy to merge in.
    ///   - base: The copy both sides came from, when known.
    ///   - importing: Copy the items across even though `other` is another keychain (another file id).
    /// - Returns: What changed here, and the conflicts met.
    /// - Throws: `KeychainError.invalidParameter` when `other` or `base` is another keychain (and not `importing`);
    ///   `.unsupportedFeature` when this keychain is format version 1 (it keeps no tombstones; upgrade it first) or
    ///   either keychain is open with a credential scoped to access groups; `.limitReached` when a conflict copy
    ///   cannot be made; what reading either keychain or committing throws. Nothing is written then.
    public func merge(from other: Keychain, base: Keychain? = nil, importing: Bool = false) throws(KeychainError) -> MergeReport {
        guard other !== self else { return MergeReport() }
        let (theirs, theirFileID) = try other.mergeSide()
        var baseEntries: [ItemID: MergeEntry]? = nil
        var baseFileID: [UInt8]? = nil
        if let base, base !== self {
            let side = try base.mergeSide()
            (baseEntries, baseFileID) = (side.entries, side.fileID)
        } else if base === self {
            baseEntries = try mergeSide().entries
        }
        return try batch { (batch) throws(KeychainError) -> MergeReport in
            guard log.formatVersion >= 2 else {
                throw .unsupportedFeature(
                    offset: 0, reason: "merging into a format version 1 keychain, which keeps no tombstones; upgrade it first (kcf upgrade)")
            }
            guard log.accessScope == nil else {
                throw .unsupportedFeature(offset: 0, reason: "merging with a credential scoped to access groups; open the keychain with one for the whole keychain")
            }
            if !importing {
                for (name, fileID) in [("the other copy", theirFileID), ("the base", baseFileID)] {
                    guard let fileID, fileID != log.fileID else { continue }
                    throw .invalidParameter(
                        "\(name) is another keychain (file id \(Self.hex(fileID)), this one's is \(Self.hex(log.fileID))); "
                            + "merge copies of one keychain, or import to copy its items across")
                }
            }
            let ours = try batch.mergeEntries(tombstones: log.tombstones)
            let outcome = try CopyMerger.merge(ours: ours, theirs: theirs, base: baseEntries)
            var report = MergeReport()
            // A conflict whose copy this keychain holds already was reported by the merge that made it.
            report.conflicts = outcome.conflicts.filter { conflict in conflict.copyID.map { ours[$0]?.version == nil } ?? true }
            var deletions: [LogEntry] = []
            var puts: [LogEntry] = []
            for id in outcome.result.keys.sorted(by: { $0.bytesPrecede($1) }) {
                let merged = outcome.result[id]!
                let current = ours[id] ?? MergeEntry()
                switch (merged.version, current.version) {
                case (let version?, let held) where held?.digest != version.digest:
                    puts.append(.put(id: id, attributes: version.attributes, secret: .bytes(version.secret)))
                    if held != nil { report.changed += 1 } else { report.added += 1 }
                case (nil, .some):
                    // A deletion records its tombstone: the merged one, which a deletion always has (§43.3, §43.5).
                    guard let time = merged.tombstone else {
                        throw .invalidParameter("internal error: a merge deletes item \(id) without a tombstone")
                    }
                    deletions.append(.deletion(id: id, time: time))
                    report.deleted += 1
                    continue
                default:
                    break
                }
                if let time = merged.tombstone, time != current.tombstone {
                    deletions.append(.tombstone(id: id, time: time, group: nil))
                    report.tombstones += 1
                }
            }
            for (id, entry) in theirs {
                guard let version = entry.version, outcome.result[id]?.version?.digest != version.digest else { continue }
                if let base = baseEntries?[id]?.version, base.digest == version.digest { continue }
                if outcome.result[ConflictCopy.id(origin: id, digest: version.digest)]?.version != nil { continue }
                if let time = outcome.result[id]?.tombstone, time > version.time { report.overruled.append(id) }
            }
            report.overruled.sort { $0.bytesPrecede($1) }
            // Deletions first: a put may take the primary key of an item deleted here.
            if !deletions.isEmpty || !puts.isEmpty { try batch.stage(deletions + puts) }
            return report
        }
    }

    /// This copy's entries and file id, read under its lock: the side of a merge that is only read.
    func mergeSide() throws(KeychainError) -> (entries: [ItemID: MergeEntry], fileID: [UInt8]) {
        try withRead { () throws(KeychainError) -> ([ItemID: MergeEntry], [UInt8]) in
            guard log.accessScope == nil else {
                throw .unsupportedFeature(offset: 0, reason: "merging with a credential scoped to access groups; open the keychain with one for the whole keychain")
            }
            let log = self.log
            let entries = try MergeEntry.entries(of: index.itemsInAddedOrder(), tombstones: log.tombstones) { (item) throws(KeychainError) in
                try log.decryptSecret(of: item)
            }
            return (entries, log.fileID)
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { $0 < 0x10 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
