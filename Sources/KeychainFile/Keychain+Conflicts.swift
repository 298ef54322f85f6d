extension Keychain {
    /// The conflict copies merges kept in this keychain (SPEC.md §43.4), ordered by the item they are copies of.
    ///
    /// For example:
    /// ```swift
    /// for copy in try keychain.conflictCopies() {
    ///     try keychain.resolveConflict(copy.copyID, keeping: .item)
    /// }
    /// ```
    ///
    /// - Throws: What reading the keychain throws (a secret is decrypted only for an item whose attributes carry a
    ///   marker, to tell whether it was changed).
    public func conflictCopies() throws(KeychainError) -> [ConflictCopyItem] {
        try withRead { () throws(KeychainError) -> [ConflictCopyItem] in
            var copies: [ConflictCopyItem] = []
            for item in index.itemsInAddedOrder() {
                let attributes = item.attributes.detached()
                guard let (origin, _) = ConflictCopy.unmarked(attributes, id: item.id) else { continue }
                let version = MergeVersion(id: item.id, attributes: attributes, secret: try log.decryptSecret(of: item))
                copies.append(ConflictCopyItem(
                    copyID: item.id, itemID: origin, itemClass: attributes.itemClass, isItemLive: index[origin] != nil,
                    isChanged: ConflictCopy.original(of: version) == nil, attributes: attributes))
            }
            return copies.sorted { $0.itemID != $1.itemID ? $0.itemID.bytesPrecede($1.itemID) : $0.copyID.bytesPrecede($1.copyID) }
        }
    }

    /// Settles one conflict copy: keeps the item as it is, or makes the copy's version the item; the copy is deleted
    /// either way, and its tombstone keeps a later merge from making the same copy again.
    ///
    /// For example:
    /// ```swift
    /// try keychain.resolveConflict(copy.copyID, keeping: .copy)
    /// ```
    ///
    /// - Parameters:
    ///   - copyID: The conflict copy's id (``ConflictCopyItem/copyID``).
    ///   - keeping: Which version stays.
    /// - Throws: `KeychainError.itemNotFound` when no live item has `copyID`; `.invalidParameter` when it is not a
    ///   conflict copy; `.duplicateItem` when keeping the copy would give the item the primary key another item
    ///   holds; what committing throws.
    public func resolveConflict(_ copyID: ItemID, keeping: ConflictResolution) throws(KeychainError) {
        try batch { (batch) throws(KeychainError) in
            guard let copy = batch.state[copyID] else { throw .itemNotFound }
            guard let (origin, attributes) = ConflictCopy.unmarked(copy.attributes.detached(), id: copyID) else {
                throw .invalidParameter("item \(copyID) is not a conflict copy")
            }
            if case .string(let group)? = attributes[.accessGroup] {
                try Keychain.checkScope(group: group, within: batch.scope, operation: "resolving conflicts")
            }
            var entries: [LogEntry] = [.delete(id: copyID)]
            if keeping == .copy {
                let secret = try batch.decryptSecret(copy)
                // The kept version is newer than the one it replaces, even within one millisecond of it: else a later
                // merge with a copy still holding that version would order the two by digest (SPEC.md §43.4).
                var time = RecordLogV2.milliseconds(batch.now)
                if let item = batch.state[origin] {
                    let previous = MergeVersion(id: origin, attributes: item.attributes.detached(), secret: try batch.decryptSecret(item))
                    time = max(time, previous.time &+ 1)
                    // The version the item held is set aside too: a tombstone of the id its conflict copy would have
                    // keeps a later merge with a copy still holding it from keeping it again.
                    let dismissed = ConflictCopy.id(origin: origin, digest: previous.digest)
                    if batch.state[dismissed] == nil && log.formatVersion >= 2 {
                        let group: String? = if case .string(let name)? = attributes[.accessGroup] { name } else { nil }
                        entries.append(.tombstone(id: dismissed, time: time, group: group))
                    }
                }
                let dated = try attributes.setting(.modificationDate, to: .date(milliseconds: time))
                entries.append(.put(id: origin, attributes: dated, secret: .bytes(secret)))
            }
            try batch.stage(entries)
        }
    }
}
