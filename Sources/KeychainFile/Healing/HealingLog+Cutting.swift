#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Taking back what was written but never committed (Docs/FormatVersion2.md §3 rules 3 and 4, §5): the parts
/// of an undone transaction, and a remnant past the written end.
extension HealingLog {
    /// Cuts the log back to logical offset `end`, at or above the committed end: the parts of a transaction
    /// without its last part, or anything else past the committed end that the replay does not keep.
    ///
    /// A new commit says so first — the same committed end and head, the written end `end`, and the parity of
    /// the chunk `end` falls in, recomputed from its bytes below `end` — then the file is truncated to where
    /// the log now ends, and both are synced. A crash before the slot is whole leaves the commit before the cut
    /// (the replay cuts again); after it, a longer file is a remnant the next writer cuts.
    ///
    /// The records below `end` must have verified (the replay read them): the new parity is computed from
    /// their bytes. Records set aside are never cut, and a cut ending in their chunk is refused (it would
    /// recompute the parity that is their evidence).
    ///
    /// - Throws: `KeychainError.invalidParameter` if `end` is below the committed end (committed records are
    ///   never cut) or past the written end; `.io` if appends are refused for a reason a cut does not lift
    ///   (``appendRefusal``), if another writer changed the slots, if the bytes below `end` in its chunk cannot
    ///   be read, or if a write fails (then further writes are refused until the log is opened again).
    ///
    /// For example:
    /// ```swift
    /// // The replay found parts of a transaction after the committed end, without their last part:
    /// try log.cut(to: log.committedEnd)
    /// ```
    func cut(to end: Int) throws(KeychainError) {
        guard end >= committedEnd else {
            throw .invalidParameter(
                "cutting the log back to byte \(end) would drop committed records: its committed end is byte \(committedEnd)")
        }
        guard end <= writtenEnd else {
            throw .invalidParameter("cutting the log back to byte \(end): it ends at byte \(writtenEnd)")
        }
        if let appendRefusal, !appendRefusal.concernsLastChunk {
            throw .io(operation: "cut (\(appendRefusal))", errno: EIO, path: file.path)
        }
        try checkSlotsUnchanged()
        guard end < writtenEnd, let seal = newest?.seal else {
            // Nothing logged is cut (below the written end there is a slot: without one, the written end is the
            // rewrite end, which the committed end never lies below). Only a remnant past the end goes.
            try poisoningOnFailure { () throws(KeychainError) in try cutRemnant() }
            return
        }
        let parity = try parityOfChunk(endingAt: end)
        try poisoningOnFailure { () throws(KeychainError) in
            // A chunk below `end` that the short file lost part of gets its parity back before the commit.
            try restoreParity(ofChunksBelow: end)
            try commit(
                writtenEnd: end, committedEnd: Int(seal.committedEnd), headSequence: seal.headSequence, headChain: seal.headChain,
                parity: parity, lastWrite: end..<end)
            try file.truncate(to: HealingLayout.physicalEnd(ofLog: end))
            try file.sync()
        }
        appendRefusal = nil
        missingRange = nil
        parityUnsureFromChunk = nil
    }

    /// Truncates the file where the log ends: bytes past it are a remnant of a write whose slot never reached
    /// the disk (§3 rule 3), or zeros (rule 4). The next writer cuts them, so that a later write's missing
    /// bytes show as a short file and nothing stale lies where the log will grow.
    func cutRemnant() throws(KeychainError) {
        let end = HealingLayout.physicalEnd(ofLog: writtenEnd)
        if try file.size() > end { try file.truncate(to: end) }
    }

    /// The parity of the chunk logical offset `end` falls in, over its bytes below `end` (the records the
    /// caller verified), for the commit that makes `end` the written end.
    func parityOfChunk(endingAt end: Int) throws(KeychainError) -> ChunkParity {
        let start = end - end % ChunkParity.dataLength
        guard start < end else { return ChunkParity() }
        if let setAside = setAsideRange, setAside.upperBound > start {
            throw .io(
                operation: "cut (records set aside at bytes \(setAside) lie in the chunk the log would end in, and their parity would be "
                    + "recomputed; drop them first)",
                errno: EIO, path: file.path)
        }
        return try parity(ofChunkBytes: start..<end, operation: "cut")
    }

    /// The parity of log bytes `range` — the first bytes of one chunk — as the file holds them, for `operation`.
    ///
    /// - Throws: `KeychainError.io` if any of them cannot be read.
    func parity(ofChunkBytes range: Range<Int>, operation: String) throws(KeychainError) -> ChunkParity {
        let kept = Self.readTolerating(file, count: range.count, at: HealingLayout.physical(range.lowerBound))
        guard kept.unreadable.isEmpty else {
            throw .io(
                operation: "\(operation) (bytes \(range) of the log, which it keeps, could not all be read; repair them first)",
                errno: EIO, path: file.path)
        }
        return ChunkParity(chunk: kept.bytes)
    }
}
