extension RecordLogV2 {
    /// What the last read repaired and the next write will put back: header pages that do not hold the verified
    /// header, and the log chunks whose repaired bytes the records' tags confirmed.
    var repairs: RepairReport {
        let chunks = state.replayed.repairs.map { repair in
            let start = HealingLayout.physical(repair.chunk * ChunkParity.dataLength)
            return RepairReport.RepairedChunk(
                chunk: repair.chunk, fileRange: start..<(start + repair.data.count), changedBytes: repair.changedOffsets.count)
        }
        let copies = state.pagesIntact.indices.filter { !state.pagesIntact[$0] }
        return RepairReport(headerCopies: copies, chunks: chunks)
    }
}
