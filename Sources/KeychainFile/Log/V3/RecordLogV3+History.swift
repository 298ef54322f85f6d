extension RecordLogV3 {
    /// What a merge compares of this copy's log (SPEC.md §43.9); nil for a holder scoped to groups, whose replay
    /// does not read every group's pages, and for a recovering read, whose records are not all this file's history.
    var copyHistory: CopyHistory? {
        guard !state.groups.isScoped, !isRecoveryView else { return nil }
        return CopyHistory(
            formatVersion: formatVersion, fileID: fileID, epoch: epoch, rewriteEnd: Int(state.header.rewriteEnd), end: end, headChain: state.replayed.head.chainValue, path: path,
            fileSystem: fileSystem, identity: state.identity, headerPageCount: state.pageCount)
    }

    /// Replays the log from its start, every group followed, up to the last commit that ends by `limit` (SPEC.md
    /// §43.9): the items and tombstones that commit left, and its end (0 when none ends by `limit`).
    ///
    /// - Throws: `.unsupportedFeature` for a holder scoped to groups; what a replay throws: a record below `limit`
    ///   that no longer verifies.
    func replayEarlierState(endingBy limit: Int) throws(KeychainError) -> (index: ItemIndex, tombstones: [ItemID: Int64], end: Int) {
        guard !state.groups.isScoped else {
            throw .unsupportedFeature(offset: 0, reason: "reading an earlier state of the log with a credential scoped to access groups")
        }
        let header = state.header
        var keys = state.keys
        keys.watchedPages = [:]
        let log = try HealingLog(opening: state.logFile, headerKey: state.logKeys.header, epoch: epoch, rewriteEnd: Int(header.rewriteEnd))
        var replay = ReplayV2(
            log: log, keys: .version3(keys, groupNames: state.groups.names, followsEveryGroup: true),
            start: Head(epoch: epoch, sequence: 0, chainValue: header.initialChainValue(headerKey: state.logKeys.header)),
            groups: Self.initialChains(of: state.groups, keys: keys),
            rewriteHead: Head(epoch: epoch, sequence: header.rewriteHeadSequence, chainValue: header.rewriteHeadChain))
        replay.stopsBy = limit
        try replay.run()
        return (replay.index, replay.outcome.tombstones, replay.outcome.end)
    }
}
