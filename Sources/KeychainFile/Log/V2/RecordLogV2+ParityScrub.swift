// The parity scrub of a version 2 file (SPEC.md §19.5): `Keychain.checkParity()` and `repairParity(keepingCopyAt:)`.
extension RecordLogV2: HealingLogParityScrubbing {
    var pendingRepairs: [HealingLog.ChunkRepair] { state.replayed.repairs }

    /// Version 2's healing log addresses the file itself.
    func fileOffset(ofHealingLogOffset offset: Int) -> Int { offset }

    /// ``HealingLogParityScrubbing/scrubHealingLogParity(_:rewriting:)``.
    func scrubParity(_ index: inout ItemIndex, rewriting: Bool) throws(KeychainError) -> ParityReport {
        try scrubHealingLogParity(&index, rewriting: rewriting)
    }
}
