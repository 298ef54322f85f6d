/// Repair proposals and their write-back (Docs/FormatVersion2.md §2): parity proposes bytes, the caller's tags
/// confirm them, and only confirmed bytes and corrected parity reach the disk.
extension HealingLog {
    /// A chunk's repair, as proposed by ``repair(chunk:)``: nothing of it is on disk until ``writeBack(_:)``.
    struct ChunkRepair {
        let chunk: Int
        /// The chunk's bytes as repaired (codewords that could not be repaired are left as read).
        let data: [UInt8]
        /// The chunk offsets whose bytes changed.
        let changedOffsets: [Int]
        /// The parity with its own damaged symbols corrected (unrepaired codewords keep what was stored).
        let parity: ChunkParity
        /// Whether any parity symbol was corrected.
        let parityChanged: Bool
        let unrepairedCodewords: [Int]
    }

    /// Proposes repaired bytes for chunk `chunk` of the log, from the parity on disk: the complete chunk's own,
    /// or the newest slot's for the last one. Writes nothing.
    ///
    /// Sectors that cannot be read (`EIO`), and bytes the last write claims but the file does not hold, are
    /// zero-filled and repaired as erasures. When that leaves codewords unrepaired, the bytes that may be
    /// wrong without a sign of it — the last write's (its slot may have reached the disk before them) and those
    /// set aside — are tried as erasures too, and last the older slot's parity over the bytes it covered.
    func repair(chunk: Int) throws(KeychainError) -> ChunkRepair {
        let start = chunk * ChunkParity.dataLength
        let count = max(0, min(ChunkParity.dataLength, writtenEnd - start))
        guard count > 0 else {
            return ChunkRepair(chunk: chunk, data: [], changedOffsets: [], parity: ChunkParity(), parityChanged: false, unrepairedCodewords: [])
        }
        let held = max(0, min(count, (try file.size()) - HealingLayout.physical(start)))
        var (read, erasedData) = Self.readTolerating(file, count: held, at: HealingLayout.physical(start))
        if held < count {
            read += [UInt8](repeating: 0, count: count - held)
            for offset in held..<count { erasedData.insert(offset) }
        }
        let stored: ChunkParity
        var erasedParity: Set<Int> = []
        if count == ChunkParity.dataLength {
            let onDisk = Self.readTolerating(file, count: ChunkParity.parityLength, at: HealingLayout.parityOffset(ofChunk: chunk))
            stored = ChunkParity(storedBytes: onDisk.bytes)
            erasedParity = onDisk.unreadable
        } else if let newestParity {
            stored = newestParity
        } else {
            // No slot holds this chunk's parity (none reads, or the rewrite reaches past it).
            return ChunkRepair(
                chunk: chunk, data: read, changedOffsets: [], parity: ChunkParity(), parityChanged: false,
                unrepairedCodewords: Array(0..<ChunkParity.depth))
        }
        func attempt(erasing suspects: Set<Int>) -> ChunkRepair {
            var data = read
            var parity = stored
            let result = parity.repair(chunk: &data, erasedData: erasedData.union(suspects), erasedParity: erasedParity)
            return ChunkRepair(
                chunk: chunk, data: data, changedOffsets: result.changedOffsets, parity: parity, parityChanged: parity != stored,
                unrepairedCodewords: result.unrepairedCodewords)
        }
        var best = attempt(erasing: [])
        let chunkRange = start..<(start + count)
        let suspects = [lastWrite, setAsideRange].compactMap { $0?.clamped(to: chunkRange) }.filter { !$0.isEmpty }
        for range in suspects where !best.unrepairedCodewords.isEmpty {
            let retried = attempt(erasing: Set((range.lowerBound - start)..<(range.upperBound - start)))
            if retried.unrepairedCodewords.count < best.unrepairedCodewords.count { best = retried }
        }
        let olderEnd = Int(older?.seal.writtenEnd ?? 0)
        if let olderParity = older?.parity, olderEnd > start, olderEnd - start < count, !best.unrepairedCodewords.isEmpty {
            // The older slot's parity covers this chunk's bytes below its written end (the rest were zeros then).
            var prefix = Array(read[0..<(olderEnd - start)])
            var parityThen = olderParity
            let erasedThen = erasedData.filter { $0 < olderEnd - start }
            let then = parityThen.repair(chunk: &prefix, erasedData: erasedThen, erasedParity: [])
            if then.unrepairedCodewords.isEmpty {
                // Only the bytes below the older commit are proposed; the last write's stay as read, and the
                // codewords they left unrepaired stay listed, so that a write-back takes no parity from this.
                best = ChunkRepair(
                    chunk: chunk, data: prefix + read[(olderEnd - start)...], changedOffsets: then.changedOffsets,
                    parity: stored, parityChanged: false, unrepairedCodewords: best.unrepairedCodewords)
            }
        }
        return best
    }

    /// Writes back a repair the caller confirmed (what its bytes belong to verifies by its tags): only the bytes
    /// that changed, then a sync, then the corrected parity — the complete chunk's in place; the last chunk's
    /// in a new commit of the same ends and head, written to the other slot — and a sync. Parity is never
    /// recomputed from the chunk as read: that would make it agree with damage a repair left (an unrepaired
    /// codeword).
    ///
    /// A last chunk repaired whole, up to the written end, lifts a refusal of appends that its bytes caused:
    /// unreadable, not matching the stored parity, or missing.
    func writeBack(_ repair: ChunkRepair) throws(KeychainError) {
        let start = repair.chunk * ChunkParity.dataLength
        precondition(start + repair.data.count <= writtenEnd, "a chunk of the log")
        let isWholeTail = repair.data.count < ChunkParity.dataLength && start + repair.data.count == writtenEnd
            && repair.unrepairedCodewords.isEmpty
        if isWholeTail, try file.size() < HealingLayout.physicalEnd(ofLog: writtenEnd) {
            // The last write's missing bytes: those a repair left unchanged were zeros, as the file extends.
            try file.truncate(to: HealingLayout.physicalEnd(ofLog: writtenEnd))
        }
        var index = 0
        let changed = repair.changedOffsets
        while index < changed.count {
            // A run of adjacent changed offsets is written as one piece.
            var end = index + 1
            while end < changed.count && changed[end] == changed[end - 1] + 1 { end += 1 }
            let piece = Array(repair.data[changed[index]...changed[end - 1]])
            try piece.withBytes { (raw) throws(KeychainError) in
                try file.writeAll(raw, at: HealingLayout.physical(start + changed[index]))
            }
            index = end
        }
        try file.sync()
        if repair.data.count == ChunkParity.dataLength {
            if repair.parityChanged {
                try repair.parity.bytes.withBytes { (raw) throws(KeychainError) in
                    try file.writeAll(raw, at: HealingLayout.parityOffset(ofChunk: repair.chunk))
                }
                try file.sync()
            }
        } else if isWholeTail {
            if repair.parityChanged, let seal = newest?.seal, appendRefusal?.concernsLastChunk ?? true {
                // The slot's parity was damaged: a commit of the same ends puts the corrected parity on disk.
                try checkSlotsUnchanged()
                try poisoningOnFailure { () throws(KeychainError) in
                    try commit(
                        writtenEnd: writtenEnd, committedEnd: Int(seal.committedEnd), headSequence: seal.headSequence,
                        headChain: seal.headChain, parity: repair.parity, lastWrite: writtenEnd..<writtenEnd)
                }
            }
            tailParity = repair.parity
            // Missing bytes in an earlier chunk (a last write that completed one) are not repaired by this one.
            let missingElsewhere = missingRange.map { $0.lowerBound < start } ?? false
            if appendRefusal?.concernsLastChunk == true && !missingElsewhere {
                appendRefusal = nil
                missingRange = nil
            }
        }
    }
}
