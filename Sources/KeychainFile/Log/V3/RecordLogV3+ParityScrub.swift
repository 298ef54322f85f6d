// The parity scrub of a version 3 file (SPEC.md §19.5): version 2's, at the places header runs of several pages move
// it to (``HeaderRunShiftedFileHandle``), for a holder of the whole keychain.
extension RecordLogV3: HealingLogParityScrubbing {
    var pendingRepairs: [HealingLog.ChunkRepair] { state.replayed.repairs }

    func fileOffset(ofHealingLogOffset offset: Int) -> Int {
        HeaderRunShiftedFileHandle.physical(offset, pageCount: state.pageCount)
    }

    /// Takes the file's size now as the one this state describes, after writes that changed no record.
    func noteSizeAfterWriting() throws(KeychainError) {
        state.size = try file.size()
    }

    /// ``HealingLogParityScrubbing/scrubHealingLogParity(_:rewriting:)`` for a full holder. A credential scoped to
    /// access groups is refused, before anything is read: a chunk holds other groups' segments, whose bytes the record
    /// chain does not cover (only their page tags), so such a holder could neither tell stale parity from damaged
    /// records nor compute parity from verified bytes (§19.5).
    func scrubParity(_ index: inout ItemIndex, rewriting: Bool) throws(KeychainError) -> ParityReport {
        guard !state.groups.isScoped else {
            throw .missingEntitlement(group: nil, operation: rewriting ? "rewriting the keychain's parity" : "checking the keychain's parity")
        }
        return try scrubHealingLogParity(&index, rewriting: rewriting)
    }
}
