/// The physical side of a parity scrub (SPEC.md §19.5): a chunk's stored parity compared with the parity of its
/// bytes as the caller verified them by their records' tags, and rewritten where it differs. An open never reads
/// parity while the records verify, so parity that a torn write or decay spoiled is found only this way, before a
/// second fault in its chunk needs it.
extension HealingLog {
    /// One complete chunk's stored parity against the parity of its verified bytes.
    struct ParityComparison {
        let chunk: Int
        /// The parity of the chunk's verified bytes.
        let computed: ChunkParity
        /// The offsets into the chunk's parity whose stored bytes differ from ``computed``, or could not be read.
        let differing: [Int]
    }

    /// Compares the parity stored after complete chunk `chunk` with the parity of `verifiedData`, the chunk's
    /// 57,088 bytes as the caller verified them by their records' tags. Writes nothing.
    func compareParity(ofChunk chunk: Int, verifiedData: [UInt8]) -> ParityComparison {
        precondition(verifiedData.count == ChunkParity.dataLength, "a complete chunk")
        let computed = ChunkParity(chunk: verifiedData)
        let stored = Self.readTolerating(file, count: ChunkParity.parityLength, at: HealingLayout.parityOffset(ofChunk: chunk))
        let differing = computed.bytes.indices.filter { stored.unreadable.contains($0) || stored.bytes[$0] != computed.bytes[$0] }
        return ParityComparison(chunk: chunk, computed: computed, differing: differing)
    }

    /// Writes the parity bytes of `comparison` that differ from what the file holds, each run of adjacent ones in
    /// one write, at the chunk's parity place; no sync (the caller syncs once, after every chunk). Only parity is
    /// written: a crash leaves the chunk's data as it was and its parity partly old, which the next scrub finds.
    func rewriteParity(_ comparison: ParityComparison) throws(KeychainError) {
        let base = HealingLayout.parityOffset(ofChunk: comparison.chunk)
        let differing = comparison.differing
        var index = 0
        while index < differing.count {
            var end = index + 1
            while end < differing.count && differing[end] == differing[end - 1] + 1 { end += 1 }
            let piece = Array(comparison.computed.bytes[differing[index]...differing[end - 1]])
            try piece.withBytes { (raw) throws(KeychainError) in try file.writeAll(raw, at: base + differing[index]) }
            index = end
        }
    }

    /// The newest commit slot's parity of the last chunk against the parity of `verifiedTail`, the chunk's bytes up
    /// to the written end as the caller verified them: where that parity lies in the file and how many of its bytes
    /// differ (0 when it matches), or `nil` when no slot holds this chunk's parity (none reads, or the rewrite
    /// reaches past the newest slot's end).
    func compareLastChunkParity(verifiedTail: [UInt8]) -> (parityRange: Range<Int>, differing: Int)? {
        guard let newest, Int(newest.seal.writtenEnd) == writtenEnd else { return nil }
        let computed = ChunkParity(chunk: verifiedTail)
        let differing = computed.bytes.indices.filter { newest.parity.bytes[$0] != computed.bytes[$0] }.count
        let start = HealingLayout.slotOffsets[Int(newest.seal.counter % 2)] + Seal.encodedLength
        return (start..<(start + ChunkParity.parityLength), differing)
    }
}
