#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Records set aside as possibly acknowledged (Docs/FormatVersion2.md §3 rule 2): the newest commit's records
/// that do not verify, even after repair. Their write may not have reached the disk whole, or may have and been
/// damaged since; the two cannot be told apart, so they are kept, with what could still repair them, until
/// `kcf repair` drops them.
extension HealingLog {
    /// Sets aside the records in `range`, which the replay found do not verify.
    ///
    /// They are kept as they are: no cut reaches them (they lie below the committed end), appends go on past
    /// them, and the parity that could still repair them goes on too. When they lie in the last chunk, the
    /// parity an append extends is the one the newest slot stored — the parity of the bytes as they were
    /// written — never one computed from them as they now read; every later commit carries it, and the chunk's
    /// own parity holds it once the chunk is complete. (A complete chunk's parity is never rewritten but by a
    /// confirmed repair.) ``repair(chunk:)`` tries their range as erasures. This lifts a refusal of appends
    /// that their bytes caused: a last chunk that does not match its parity, or that the file does not hold.
    ///
    /// - Parameter range: Logical offsets within the committed log, above the rewrite end.
    /// - Throws: `KeychainError.invalidParameter` if `range` is empty, reaches below the rewrite end or past
    ///   the committed end, or other records are set aside already.
    ///
    /// For example:
    /// ```swift
    /// // The newest commit's last record does not verify: keep it, and go on writing after it.
    /// try log.setAside(olderCommittedEnd..<log.committedEnd)
    /// ```
    func setAside(_ range: Range<Int>) throws(KeychainError) {
        let end = Int(newest?.seal.committedEnd ?? 0)
        guard !range.isEmpty, range.lowerBound >= rewriteEnd, range.upperBound <= end else {
            throw .invalidParameter(
                "records at log bytes \(range) cannot be set aside: only committed records above the rewrite end (bytes \(rewriteEnd)..<\(end)) can")
        }
        if let current = setAsideRange, current != range {
            throw .invalidParameter("records at log bytes \(current) are set aside already; drop them before setting others aside")
        }
        setAsideRange = range
        let tailStart = writtenEnd - writtenEnd % ChunkParity.dataLength
        guard range.upperBound > tailStart, let stored = newestParity else { return }
        switch appendRefusal {
        case .tailMismatch?:
            break
        case .lastWriteMissing?:
            // Appends may go on only if every missing byte is set aside (the others would be cut: rule 3).
            guard let missing = missingRange, missing.lowerBound >= range.lowerBound, missing.upperBound <= range.upperBound else { return }
        default:
            return
        }
        tailParity = stored
        appendRefusal = nil
    }

    /// Drops the records set aside, as `kcf repair` does once it kept a copy of the file: cuts the log back to
    /// where they start, with a commit whose committed end is there. Possible only while nothing was
    /// committed after them; records in the middle of the log go only with a rewrite of the file.
    ///
    /// - Parameters:
    ///   - headSequence: The sequence number of the record ending where the set-aside ones start (the replay
    ///     computed it).
    ///   - headChain: That record's chain value (16 bytes).
    /// - Throws: `KeychainError.invalidParameter` if no records are set aside, or some were committed after
    ///   them; otherwise as ``cut(to:)``.
    func dropSetAside(headSequence: UInt64, headChain: [UInt8]) throws(KeychainError) {
        guard let range = setAsideRange else { throw .invalidParameter("no records are set aside") }
        guard range.upperBound == committedEnd else {
            throw .invalidParameter(
                "records were committed after those set aside at log bytes \(range): only a rewrite of the file drops them now")
        }
        if let appendRefusal, !appendRefusal.concernsLastChunk {
            throw .io(operation: "drop records set aside (\(appendRefusal))", errno: EIO, path: file.path)
        }
        try checkSlotsUnchanged()
        let end = range.lowerBound
        setAsideRange = nil
        let parity: ChunkParity
        do throws(KeychainError) {
            parity = try parityOfChunk(endingAt: end)
        } catch {
            setAsideRange = range
            throw error
        }
        try poisoningOnFailure { () throws(KeychainError) in
            try restoreParity(ofChunksBelow: end)
            try commit(writtenEnd: end, committedEnd: end, headSequence: headSequence, headChain: headChain, parity: parity, lastWrite: end..<end)
            try file.truncate(to: HealingLayout.physicalEnd(ofLog: end))
            try file.sync()
        }
        appendRefusal = nil
        missingRange = nil
        parityUnsureFromChunk = nil
    }
}
