/// A log that keeps its records in a healing log (format versions 2 and 3) and can compare that log's parity with
/// the records it verified, and rewrite the parity that differs (SPEC.md §19.5): ``scrubHealingLogParity(_:rewriting:)``.
protocol HealingLogParityScrubbing: HealingLogWriting {
    /// Whether the log was opened with recovery, so that not every record verified.
    var isRecoveryView: Bool { get }
    /// Where the last verified commit ends, in log bytes.
    var end: Int { get }
    /// What the last replay repaired and no write has put back yet.
    var pendingRepairs: [HealingLog.ChunkRepair] { get }
    /// Reads and verifies the file again from its header.
    func reload(_ index: inout ItemIndex) throws(KeychainError)
    /// What every writer does first (SPEC.md §26.4, §26.5): write back repairs, take the last chunk's parity anew.
    func prepareForWrite() throws(KeychainError)
    /// Takes the file's size now as the one the log describes, after writes that changed no record.
    func noteSizeAfterWriting() throws(KeychainError)
    /// The offset in the file of byte `offset` of the file as the healing log addresses it (``healingLogFile``).
    func fileOffset(ofHealingLogOffset offset: Int) -> Int
}

extension HealingLogParityScrubbing {
    /// Compares the parity of every chunk whose records all verified with the parity of those records' bytes and,
    /// when `rewriting`, rewrites the parity that differs.
    ///
    /// A check compares with the records as this log last verified them — the open's or the last catch-up's replay,
    /// with the bytes its repairs changed laid over the bytes as read — and writes nothing. A rewrite first reads and
    /// verifies the whole file again, so that no parity is computed from bytes verified earlier; then writes back
    /// what that replay repaired, and the last chunk's parity, as every writer does (§26.5); then, for each complete
    /// chunk, the parity bytes that differ from the parity of its bytes, and one `fdatasync`. The caller holds the
    /// lock file: shared for a check, exclusive for a rewrite, after catching up.
    ///
    /// - Throws: `KeychainError.invalidParameter` for a log opened with recovery (its records did not all verify);
    ///   for a rewrite, what reading the file again and what a write throws (records set aside: `.corrupted`; a
    ///   failed write: `.io`, after which the next call reads the file again).
    func scrubHealingLogParity(_ index: inout ItemIndex, rewriting: Bool) throws(KeychainError) -> ParityReport {
        guard !isRecoveryView else {
            throw .invalidParameter(
                "this keychain was opened with recovery, so not every record verified: open it without recovery to compare its parity")
        }
        if rewriting { try readAgainOnFailure { () throws(KeychainError) in try reload(&index) } }
        var stale: [ParityReport.StaleChunk] = []
        var unreadable: [Int] = []
        var checked = 0
        // The last chunk first (its parity is in the newest slot): a writer's write-back commits it anew.
        let log = healingLog
        let tailChunk = log.writtenEnd / ChunkParity.dataLength
        let tailStart = tailChunk * ChunkParity.dataLength
        var staleTail: [UInt8]? = nil
        if end == log.writtenEnd, tailStart < log.writtenEnd {
            if let tail = verifiedBytes(ofChunk: tailChunk, count: log.writtenEnd - tailStart) {
                if let comparison = log.compareLastChunkParity(verifiedTail: tail) {
                    checked += 1
                    if comparison.differing > 0 {
                        staleTail = tail
                        stale.append(
                            ParityReport.StaleChunk(
                                chunk: tailChunk, dataRange: fileRange(ofLog: tailStart..<log.writtenEnd),
                                parityRange: fileRange(comparison.parityRange), isInCommitSlot: true, differingBytes: comparison.differing))
                    }
                }
            } else {
                unreadable.append(tailChunk)
            }
        }
        if rewriting {
            try readAgainOnFailure { () throws(KeychainError) in
                try prepareForWrite()
                // The write-back above commits the last chunk's parity anew when the slot's did not match the chunk
                // as read; a slot whose parity a repair only partly corrected is committed here.
                if let staleTail, log.writtenEnd == tailStart + staleTail.count, log.newestParity != ChunkParity(chunk: staleTail) {
                    log.appendRefusal = .tailMismatch
                    try log.confirmLastChunk()
                }
            }
        }
        var comparisons: [HealingLog.ParityComparison] = []
        for chunk in 0..<(end / ChunkParity.dataLength) {
            guard let data = verifiedBytes(ofChunk: chunk, count: ChunkParity.dataLength) else {
                unreadable.append(chunk)
                continue
            }
            checked += 1
            let comparison = log.compareParity(ofChunk: chunk, verifiedData: data)
            guard !comparison.differing.isEmpty else { continue }
            let start = chunk * ChunkParity.dataLength
            let parity = HealingLayout.parityOffset(ofChunk: chunk)
            stale.append(
                ParityReport.StaleChunk(
                    chunk: chunk, dataRange: fileRange(ofLog: start..<(start + ChunkParity.dataLength)),
                    parityRange: fileRange(parity..<(parity + ChunkParity.parityLength)), isInCommitSlot: false,
                    differingBytes: comparison.differing.count))
            comparisons.append(comparison)
        }
        if rewriting, !comparisons.isEmpty {
            try readAgainOnFailure { () throws(KeychainError) in
                try log.poisoningOnFailure { () throws(KeychainError) in
                    for comparison in comparisons { try log.rewriteParity(comparison) }
                    try healingLogFile.sync()
                }
            }
        }
        if rewriting { try noteSizeAfterWriting() }
        return ParityReport(
            checkedChunks: checked, staleChunks: stale.sorted { $0.chunk < $1.chunk }, unreadableChunks: unreadable.sorted(),
            rewritten: rewriting && !stale.isEmpty)
    }

    /// Runs `body`; if it throws, the state may no longer describe the file, and the next call reads it again.
    private func readAgainOnFailure(_ body: () throws(KeychainError) -> Void) throws(KeychainError) {
        do throws(KeychainError) {
            try body()
        } catch {
            mustReload = true
            throw error
        }
    }

    /// The first `count` bytes of chunk `chunk` as the last replay verified them: as the file holds them, with the
    /// bytes that a repair not yet written back changed laid over them; `nil` if any of them cannot be read now.
    private func verifiedBytes(ofChunk chunk: Int, count: Int) -> [UInt8]? {
        let start = chunk * ChunkParity.dataLength
        let read = HealingLog.readTolerating(healingLogFile, count: count, at: HealingLayout.physical(start))
        guard read.unreadable.isEmpty else { return nil }
        var bytes = read.bytes
        for repair in pendingRepairs where repair.chunk == chunk {
            for offset in repair.changedOffsets where offset < count && offset < repair.data.count { bytes[offset] = repair.data[offset] }
        }
        return bytes
    }

    /// The file bytes of log bytes `range`, which lie in one chunk.
    private func fileRange(ofLog range: Range<Int>) -> Range<Int> {
        fileRange(HealingLayout.physical(range.lowerBound)..<(HealingLayout.physical(range.lowerBound) + range.count))
    }

    /// The file bytes of `range` as the healing log addresses them, which lie in one place of its layout (a chunk,
    /// a chunk's parity, a commit slot).
    private func fileRange(_ range: Range<Int>) -> Range<Int> {
        let start = fileOffset(ofHealingLogOffset: range.lowerBound)
        return start..<(start + range.count)
    }
}
