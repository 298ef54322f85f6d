extension RecordLogV2 {
    /// What a merge compares of this copy's log (SPEC.md §43.9); nil for a recovering read, whose records are not all
    /// this file's history.
    var copyHistory: CopyHistory? {
        guard !isRecoveryView else { return nil }
        return CopyHistory(
            formatVersion: formatVersion, fileID: fileID, epoch: epoch, rewriteEnd: rewriteEnd, end: end, headChain: state.replayed.head.chainValue, path: path, fileSystem: fileSystem,
            identity: state.identity, headerPageCount: 1)
    }

    /// Replays the log from its start up to the last commit that ends by `limit` (SPEC.md §43.9): the items and
    /// tombstones that commit left, and its end (0 when none ends by `limit`).
    ///
    /// - Throws: what a replay throws: a record below `limit` that no longer verifies.
    func replayEarlierState(endingBy limit: Int) throws(KeychainError) -> (index: ItemIndex, tombstones: [ItemID: Int64], end: Int) {
        let header = state.header
        let log = try HealingLog(opening: file, headerKey: state.headerKey, epoch: epoch, rewriteEnd: Int(header.rewriteEnd))
        var replay = ReplayV2(
            log: log, keys: .version2(state.keys), start: Head(epoch: epoch, sequence: 0, chainValue: state.initialChain),
            rewriteHead: Head(epoch: epoch, sequence: header.rewriteHeadSequence, chainValue: header.rewriteHeadChain))
        replay.stopsBy = limit
        try replay.run()
        return (replay.index, replay.outcome.tombstones, replay.outcome.end)
    }
}
