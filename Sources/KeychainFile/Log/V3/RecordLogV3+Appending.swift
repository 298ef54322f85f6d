// Appending to a version 3 file: version 2's commits through the healing log (SPEC.md §26.2, §26.3), each record
// §2.5.1's — the default group's pages as segments, and the heads in the commit.
extension RecordLogV3 {
    func checkWritable() throws(KeychainError) {}

    /// Version 3, as version 2, needs no acknowledgement in the lock file: its commit slots say what was committed.
    func acknowledgementBytes() -> [UInt8]? { nil }

    func takeUnconfirmedDurability() -> KeychainError? {
        defer { unconfirmedDurability = nil }
        return unconfirmedDurability
    }

    /// Before a write: puts the verified header back in a run that does not hold it, writes back what the open
    /// repaired, takes the last chunk's parity from records that verified, and cuts what follows the last commit —
    /// as version 2's writer does (SPEC.md §26.4, §26.5).
    func prepareForWrite() throws(KeychainError) {
        try checkTailMayBeDropped()
        let log = state.log
        try log.checkSlotsUnchanged()
        // One run at a time, so that a crash while writing it leaves the other.
        for (run, intact) in state.runsIntact.enumerated() where !intact {
            try HeaderRunV3.encode(state.headerBytes).withBytes { (raw) throws(KeychainError) in
                try file.writeAll(raw, at: run == 0 ? 0 : HeaderRunV3.runBOffset(pageCount: state.pageCount))
            }
            try file.sync()
            state.runsIntact[run] = true
        }
        try log.poisoningOnFailure { () throws(KeychainError) in
            try log.restoreParity(ofChunksBelow: end, except: Set(state.replayed.repairs.map(\.chunk)))
        }
        for repair in state.replayed.repairs { try log.writeBack(repair) }
        state.replayed.repairs = []
        if log.appendRefusal == .tailMismatch || log.appendRefusal == .lastWriteMissing, end == log.writtenEnd {
            try log.confirmLastChunk()
        }
        if log.writtenEnd > end { try log.cut(to: end) } else { try log.cutRemnant() }
        state.replayed.tornTail = nil
    }

    func append<Entries: RandomAccessCollection<LogEntry>>(
        _ entries: Entries, using generator: inout RandomSource
    ) throws(KeychainError) -> AppendedSecrets where Entries.Index == Int {
        do throws(KeychainError) {
            try prepareForWrite()
        } catch {
            mustReload = true
            throw error
        }
        guard !entries.isEmpty else { throw .invalidParameter("a commit needs at least one entry") }
        let time = RecordLogV2.milliseconds(clock())
        defer { for case .put(_, let attributes, .inReservedBlock) in entries { attributes.encoded.storage.wipeReserved() } }
        let parts = RecordLogV2.partRanges(of: entries)
        let before = state.replayed
        var heads = try currentHeads
        var secrets: [SealedSecret] = []
        var deletions: [(ItemID, Int64)] = []
        var position = end
        var chain = head.chainValue
        // Each part is sealed and appended before the next is made; only the last commits (SPEC.md §26.3).
        for (part, range) in parts.enumerated() {
            let isLast = part == parts.count - 1
            var sealed: [EntryV2] = []
            sealed.reserveCapacity(range.count)
            for index in range {
                switch entries[index] {
                case .put(let id, let attributes, let secret):
                    sealed.append(.put(id: id, attributes: attributes, secret: secret.plaintext(attributes: attributes)))
                case .delete(let id):
                    sealed.append(.delete(id: id, time: time))
                    deletions.append((id, time))
                }
            }
            defer { EntryV2.wipeSecrets(&sealed) }
            let sequence = head.sequence + 1 + UInt64(part)
            let record: EncodedRecordV3
            do throws(KeychainError) {
                record = try RecordV3Encoder.encode(
                    kind: isLast ? .commit : .part, sequence: sequence, part: UInt32(part), previousChain: chain,
                    segments: RecordV3Encoder.pages(sealed, keys: state.defaultGroup), heads: heads, keys: state.keys, using: &generator)
            } catch {
                if part > 0 {
                    mustReload = true
                    takeBackParts(to: before.end)
                }
                throw error
            }
            try appendRecord(
                record.bytes, at: position, isLast: isLast, sequence: sequence, chain: record.chainTag, before: (before.end, before.head))
            secrets += try Self.sealedSecrets(of: record.bytes, entries: sealed)
            position += record.bytes.count
            chain = record.chainTag
            heads = record.heads
        }
        state.replayed.head = Head(epoch: epoch, sequence: head.sequence + UInt64(parts.count), chainValue: chain)
        state.replayed.end = position
        // The commit is in the file: what does not describe it makes the next call read the file again, not fail this one.
        if let moved = try? Self.chains(at: heads, following: state.replayed.groups) { state.replayed.groups = moved } else { mustReload = true }
        for (id, time) in deletions { state.replayed.tombstones[id] = time }
        state.size = (try? file.size()) ?? state.size
        return AppendedSecrets(count: secrets.count) { secrets[$0] }
    }

    /// The followed groups' chains moved to `heads` (which this writer's own records left).
    static func chains(at heads: HeadsV3, following groups: [UInt8: GroupChainV3]) throws(KeychainError) -> [UInt8: GroupChainV3] {
        var moved = groups
        for head in heads.groups {
            guard let chain = groups[head.keyID] else {
                throw .invalidParameter("internal error: the heads name group \(head.keyID), which this keychain does not follow")
            }
            moved[head.keyID] = GroupChainV3(keys: chain.keys, at: head)
        }
        return moved
    }

    /// The sealed secrets of a record's puts, in entry order, copied from its bytes (which verified as written): the
    /// group segments' secret boxes lie back to back in entry order, each `s + 28` bytes for a secret of `s`.
    ///
    /// - Parameter entries: the entries the record was encoded from, in order.
    static func sealedSecrets(of record: [UInt8], entries: [EntryV2]) throws(KeychainError) -> [SealedSecret] {
        let segments = try RecordV3Decoder.scan(record).groupSegments.map(\.secrets)
        var secrets: [SealedSecret] = []
        var segment = 0
        var offset = segments.first?.lowerBound ?? 0
        for entry in entries {
            let length: Int
            switch entry {
            case .put(_, _, let secret): length = secret.count + 28
            case .copy(_, _, let box): length = box.count
            case .delete, .tombstone: continue
            }
            // A page's boxes end with its segment; the next put's box opens the next segment that holds any.
            while segment < segments.count, offset == segments[segment].upperBound {
                segment += 1
                offset = segment < segments.count ? segments[segment].lowerBound : offset
            }
            guard segment < segments.count, offset + length <= segments[segment].upperBound else {
                throw .invalidParameter("internal error: a record written holds fewer secret bytes than its puts")
            }
            secrets.append(RecordLogV2.sealedSecret(box: Array(record[offset..<(offset + length)]), entryBytes: entry.pageByteCount))
            offset += length
        }
        return secrets
    }
}
