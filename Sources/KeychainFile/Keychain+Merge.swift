#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
        // The other copies are read against a snapshot of this keychain, each under its own lock only (never two
        // keychains' locks at once). A write here before the merge's transaction makes it read them again.
        for _ in 0..<Self.mergeAttempts {
            let (snapshot, head, opener) = try withRead { () throws(KeychainError) in (index, log.head, log.secretOpener()) }
            let theirs = try other.mergeSide(against: snapshot, openSnapshotSecret: opener)
            var baseSide = try base.map { (base) throws(KeychainError) in try base.mergeSide(against: snapshot, openSnapshotSecret: opener) }
            var sharedEnd: Int? = nil
            if base == nil, !importing, let shared = try sharedHistory(with: theirs, against: snapshot) {
                (baseSide, sharedEnd) = (shared.side, shared.end)
            }
            let givenBase = base == nil ? nil : baseSide
            if var report = try merge(theirs, base: baseSide, sharedHistory: sharedEnd != nil, importing: importing, snapshotHead: head) {
                report.sharedHistoryEnd = sharedEnd
                try carryCredentials(from: theirs, base: givenBase, into: &report)
                return report
            }
        }
        throw .io(
            operation: "merging (this keychain changed \(Self.mergeAttempts) times while the other copy was read; try again)",
            errno: EAGAIN, path: path)
    }

    /// The state both this keychain and the copy read as `theirs` came from, found in their logs (SPEC.md §43.9): the
    /// last commit whose records both files hold byte for byte, read against `snapshot`, and where it ends. Nil when
    /// the copies share no commit: another epoch (one was rewritten since they parted), logs that differ from their
    /// first record, or a copy that cannot be compared.
    private func sharedHistory(with theirs: MergeSide, against snapshot: ItemIndex) throws(KeychainError) -> (side: MergeSide, end: Int)? {
        guard let theirHistory = theirs.history else { return nil }
        return try withRead { () throws(KeychainError) -> (side: MergeSide, end: Int)? in
            guard let ourHistory = log.copyHistory, let divergence = CopyHistory.divergence(of: ourHistory, and: theirHistory) else { return nil }
            let log = self.log
            let decrypt = { (item: StoredItem) throws(KeychainError) -> [UInt8] in try log.decryptSecret(of: item) }
            // The copy holds all of this keychain's records, or this keychain all of the copy's: the earlier one of
            // the two is the shared state, already read (§43.9's last commit both hold is that one's last).
            if divergence == theirHistory.end, theirHistory.end > 0 { return (theirs, theirHistory.end) }
            if divergence == ourHistory.end, ourHistory.end > 0 {
                let side = try MergeSide(index: index, tombstones: log.tombstones, fileID: log.fileID, against: snapshot, decryptSecret: decrypt)
                return (side, ourHistory.end)
            }
            let earlier = try log.replayEarlierState(endingBy: divergence)
            guard earlier.end > 0, earlier.end >= ourHistory.rewriteEnd else { return nil }
            let side = try MergeSide(index: earlier.index, tombstones: earlier.tombstones, fileID: log.fileID, against: snapshot, decryptSecret: decrypt)
            return (side, earlier.end)
        }
    }

    /// Adds the key slots `other` holds that were added there since `base` (SPEC.md §43.1): a version 2 copy whose
    /// header this keychain's master key authenticated holds slots wrapping that key, so each opens this keychain as
    /// it opens that copy. Without a base, a slot only the other copy holds may be one removed here (a credential
    /// revoked), and is left out; so is one the base held that this keychain no longer does.
    ///
    /// The copies' slots were read with their items (``MergeSide``): the other copy is not read again once the merge
    /// has committed, so that a change to it since (another program writing over it) cannot fail a merge already made.
    private func carryCredentials(from other: MergeSide, base: MergeSide?, into report: inout MergeReport) throws(KeychainError) {
        let theirs = other.headerSlots.map { (slots: $0.slots, key: $0.masterKey) }
        let ourIDs = Set(try keySlots().map(\.id))
        let baseIDs = base?.slotIDs
        let missing = other.slotIDs.subtracting(ourIDs)
        guard !missing.isEmpty else { return }
        guard let baseIDs else {
            report.credentialsNotCarried = missing.count
            return
        }
        let added = missing.subtracting(baseIDs)
        guard !added.isEmpty else { return }
        try withWrite { () throws(KeychainError) in
            guard let theirs, let ours = log as? RecordLogV2, ours.masterKey == theirs.key else {
                report.credentialsNotCarried = added.count
                return
            }
            _ = try rewriteLocked(changing: .carry(theirs.slots.filter { added.contains($0.slotID) }))
            report.credentialsCarried = added.count
        }
    }

    /// How many times a merge reads the other copies again when this keychain changes meanwhile.
    private static let mergeAttempts = 4

    /// The merge's transaction; nil, writing nothing, when this keychain is no longer at `snapshotHead`.
    private func merge(
        _ theirSide: MergeSide, base baseSide: MergeSide?, sharedHistory: Bool, importing: Bool, snapshotHead: Head
    ) throws(KeychainError) -> MergeReport? {
        let (theirFileID, baseFileID) = (theirSide.fileID, baseSide?.fileID)
        return try batch { (batch) throws(KeychainError) -> MergeReport? in
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
            guard log.head == snapshotHead else { return nil }
            var inputs = MergeInputs(ours: batch.state, tombstones: log.tombstones, theirs: theirSide, base: baseSide, sharedHistory: sharedHistory)
            let outcome = try inputs.merge { (item) throws(KeychainError) in try batch.decryptSecret(item) }
            let (ours, theirs) = (inputs.ours, inputs.theirs)
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
                    // Version 3: in the group the item was live in here, else the one the merge makes it live in (§43.7).
                    let group = merged.version.map { AccessGroupsV3.name(of: $0.attributes) }
                    deletions.append(.tombstone(id: id, time: time, group: group))
                    report.tombstones += 1
                }
            }
            for (id, entry) in theirs {
                guard let version = entry.version, outcome.result[id]?.version?.digest != version.digest else { continue }
                if let base = inputs.base?[id]?.version, base.digest == version.digest { continue }
                if outcome.result[ConflictCopy.id(origin: id, digest: version.digest)]?.version != nil { continue }
                if let time = outcome.result[id]?.tombstone, time > version.time { report.overruled.append(id) }
            }
            report.overruled.sort { $0.bytesPrecede($1) }
            // Deletions first: a put may take the primary key of an item deleted here.
            if !deletions.isEmpty || !puts.isEmpty { try batch.stage(deletions + puts) }
            return report
        }
    }

    /// This copy read against `snapshot` (the items of the keychain merged into), under this copy's lock only: the side
    /// of a merge that is only read. `openSnapshotSecret` opens a secret of `snapshot` with the keys it was read with.
    func mergeSide(
        against snapshot: ItemIndex, openSnapshotSecret: (@Sendable (StoredItem) throws(KeychainError) -> [UInt8])? = nil
    ) throws(KeychainError) -> MergeSide {
        try withRead { () throws(KeychainError) -> MergeSide in
            guard log.accessScope == nil else {
                throw .unsupportedFeature(offset: 0, reason: "merging with a credential scoped to access groups; open the keychain with one for the whole keychain")
            }
            let log = self.log
            var side = try MergeSide(
                index: index, tombstones: log.tombstones, fileID: log.fileID, against: snapshot, openSnapshotSecret: openSnapshotSecret
            ) { (item) throws(KeychainError) in
                try log.decryptSecret(of: item)
            }
            side.history = log.copyHistory
            side.slotIDs = Set(log.keySlotInfos().map(\.id))
            if let version2 = log as? RecordLogV2 { side.headerSlots = (version2.state.header.slots, version2.masterKey) }
            return side
        }
    }

    /// This copy's entries and file id, every secret read, under its lock (for tests that compare copies).
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
