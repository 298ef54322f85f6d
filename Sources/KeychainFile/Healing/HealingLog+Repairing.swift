#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Repair proposals and their write-back (Docs/FormatVersion2.md §2): parity proposes bytes, the caller's tags
/// confirm them, and only confirmed bytes and corrected parity reach the disk; or the tags confirm the last
/// chunk as it reads, and its parity is recomputed.
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
    /// set aside — are tried as erasures too; last, in the codewords still unrepaired, the older slot's parity
    /// proposes the bytes below its written end, and the codewords stay listed if they hold bytes of the last
    /// write, which are left as read.
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
            // No slot holds this chunk's parity (none reads, it is torn, or the rewrite reaches past it).
            return ChunkRepair(
                chunk: chunk, data: read, changedOffsets: [], parity: ChunkParity(), parityChanged: false,
                unrepairedCodewords: Array(0..<ChunkParity.depth))
        }
        func attempt(erasing suspects: Set<Int>) -> ChunkRepair {
            var data = read
            var parity = stored
            let result = parity.repair(
                chunk: &data, erasedData: erasedData.union(suspects), erasedParity: erasedParity,
                margin: suspects.isEmpty ? 0 : Self.suspectMargin)
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
        return olderFallback(for: best, read: read, erasedData: erasedData)
    }

    /// The parity symbols a repair that erases suspect bytes (not known losses) leaves for checking: a decode of
    /// bytes that are not the chunk's then succeeds by chance with a probability of about 2^-32 per codeword.
    static let suspectMargin = 4

    /// `repair` with the codewords it left unrepaired taken from the older slot's parity, where that covers
    /// this chunk: below the older written end their bytes are what that parity proposes (the rest were zeros
    /// when it was computed); from there on — the last write's bytes — they are as read, and such codewords
    /// stay listed, so that a write-back takes neither their bytes nor their parity as repaired.
    private func olderFallback(for repair: ChunkRepair, read: [UInt8], erasedData: Set<Int>) -> ChunkRepair {
        let start = repair.chunk * ChunkParity.dataLength
        let olderEnd = Int(older?.seal.writtenEnd ?? 0) - start
        guard let older, !older.isTorn, olderEnd > 0, olderEnd <= read.count, !repair.unrepairedCodewords.isEmpty else { return repair }
        var prefix = Array(read[0..<olderEnd])
        var parityThen = older.parity
        let then = parityThen.repair(chunk: &prefix, erasedData: erasedData.filter { $0 < olderEnd }, erasedParity: [])
        let unrepairedThen = Set(then.unrepairedCodewords)
        var data = repair.data
        var unrepaired: [Int] = []
        for codeword in repair.unrepairedCodewords {
            var offset = codeword
            while offset < olderEnd {
                data[offset] = unrepairedThen.contains(codeword) ? read[offset] : prefix[offset]
                offset += ChunkParity.depth
            }
            // From here on the codeword's bytes are the last write's, as read (the first attempt left them so).
            if offset < read.count || unrepairedThen.contains(codeword) { unrepaired.append(codeword) }
        }
        let changed = data.indices.filter { data[$0] != read[$0] }
        return ChunkRepair(
            chunk: repair.chunk, data: data, changedOffsets: changed, parity: repair.parity, parityChanged: repair.parityChanged,
            unrepairedCodewords: unrepaired)
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
        // Missing bytes lie only in the last chunk when the file reaches its start (the chunks before it, and
        // their parity, are whole).
        let earlierChunksWhole = try file.size() >= HealingLayout.physical(start)
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
            if appendRefusal?.concernsLastChunk == true && earlierChunksWhole {
                appendRefusal = nil
                missingRange = nil
                parityUnsureFromChunk = nil
            }
        }
    }

    /// Takes the last chunk as it reads, when it does not match the parity the newest slot stored but the
    /// caller verified every record in it by its tags: the slot's parity was torn or damaged, not the records.
    /// Its parity is recomputed from its bytes and committed with the same ends and head (§2: parity from
    /// verified data). Does nothing unless appends are refused for that mismatch.
    ///
    /// - Throws: `KeychainError.io` if records set aside lie in the chunk (they did not verify), if another
    ///   writer changed the slots, or if a write fails (then further writes are refused until the log is
    ///   opened again).
    ///
    /// Also when appends are refused because the last write's bytes were missing (the slot reached the disk
    /// before them) and the caller verified every record up to the written end, as they read or through repairs
    /// it wrote back: the file is extended to the written end (the bytes no repair changed read as the zeros the
    /// caller verified), and the parity of each chunk the last write completed that the short file did not hold
    /// whole is computed again from those verified bytes, before the commit.
    func confirmLastChunk() throws(KeychainError) {
        guard let seal = newest?.seal else { return }
        switch appendRefusal {
        case .tailMismatch?:
            try checkSlotsUnchanged()
        case .lastWriteMissing?:
            try checkSlotsUnchanged()
            try poisoningOnFailure { () throws(KeychainError) in
                // The parity first: an extension that a crash left without it would no longer look short.
                try restoreParity(ofChunksBelow: writtenEnd)
                if try file.size() < HealingLayout.physicalEnd(ofLog: writtenEnd) {
                    try file.truncate(to: HealingLayout.physicalEnd(ofLog: writtenEnd))
                }
            }
        default:
            return
        }
        let parity = try parityOfChunk(endingAt: writtenEnd)
        try poisoningOnFailure { () throws(KeychainError) in
            try commit(
                writtenEnd: writtenEnd, committedEnd: Int(seal.committedEnd), headSequence: seal.headSequence, headChain: seal.headChain,
                parity: parity, lastWrite: writtenEnd..<writtenEnd)
        }
        appendRefusal = nil
        missingRange = nil
        parityUnsureFromChunk = nil
    }

    /// Writes, and syncs, the parity of every complete chunk below logical offset `end` whose parity may not be
    /// on disk whole (``parityUnsureFromChunk``), computed from the chunk's bytes, which the caller verified by its
    /// records' tags (§2: parity from verified data) — where it differs from what the file holds. Called before
    /// anything extends the file over such a chunk or commits past it, so that a crash at any point leaves either
    /// the file short (the next writer does this again) or the parity in place. Does nothing unless the file was
    /// opened short.
    ///
    /// - Throws: `KeychainError.io` if records set aside lie in such a chunk (their parity is their evidence), if
    ///   its bytes cannot all be read, or if a write fails.
    ///
    /// A writer calls it first with the chunks whose repairs it is about to write back in `except` (their bytes
    /// on disk are not yet the verified ones; a repair's write-back puts their parity back itself), before those
    /// write-backs extend the file.
    func restoreParity(ofChunksBelow end: Int, except repaired: Set<Int> = []) throws(KeychainError) {
        guard let first = parityUnsureFromChunk else { return }
        var wrote = false
        for chunk in first..<max(first, end / ChunkParity.dataLength) where !repaired.contains(chunk) {
            let start = chunk * ChunkParity.dataLength
            if let setAside = setAsideRange, setAside.overlaps(start..<(start + ChunkParity.dataLength)) {
                throw .io(
                    operation: "restoring a chunk's parity (records set aside at bytes \(setAside) lie in chunk \(chunk), and its parity is "
                        + "their evidence; drop them first)",
                    errno: EIO, path: file.path)
            }
            let parity = try parity(ofChunkBytes: start..<(start + ChunkParity.dataLength), operation: "restoring a chunk's parity")
            let stored = Self.readTolerating(file, count: ChunkParity.parityLength, at: HealingLayout.parityOffset(ofChunk: chunk))
            guard !stored.unreadable.isEmpty || stored.bytes != parity.bytes else { continue }
            try parity.bytes.withBytes { (raw) throws(KeychainError) in
                try file.writeAll(raw, at: HealingLayout.parityOffset(ofChunk: chunk))
            }
            wrote = true
        }
        if wrote { try file.sync() }
    }
}
