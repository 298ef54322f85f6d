import KeychainFile

/// How `kcf verify` and `kcf repair` print a parity scrub (``ParityReport``): one line a chunk, each naming the
/// file bytes of its data and of its parity, and what to do about it.
enum ParityText {
    /// Why `verify` does not compare a keychain's parity, or `nil` when it does: a file of format version 1 has
    /// none; a keychain opened with `--recover` did not verify every record, and a credential scoped to access
    /// groups cannot verify the other groups' bytes, so neither has verified bytes to compare the parity with.
    static func notCompared(formatVersion: Int, recovered: Bool, scoped: Bool) -> String? {
        if formatVersion == 1 { return "parity: none (format version 1 keeps no parity)" }
        if recovered { return "parity: not compared (opened with --recover: not every record verified)" }
        if scoped {
            return "parity: not compared (this credential reaches only some access groups and cannot verify the others' records; "
                + "verify with a credential that reaches the whole keychain)"
        }
        return nil
    }

    /// The lines `verify` prints after its counts: stale parity, chunks that could not be read, or that every
    /// chunk compared matches; `notCompared` (``notCompared(formatVersion:recovered:scoped:)``) when `report` is `nil`.
    static func verifyLines(_ report: ParityReport?, notCompared: String) -> [String] {
        guard let report else { return [notCompared] }
        var lines = report.staleChunks.map { "parity: stale: \($0)" }
        if !report.staleChunks.isEmpty {
            lines.append("    Stale parity costs nothing while the records verify, but a later fault in its chunk could not be")
            lines.append("    repaired from it. `kcf repair` rewrites it in place, from the records.")
        }
        lines += unreadableLines(report)
        if report.staleChunks.isEmpty {
            lines.append("parity: matches the records in \(chunks(report.checkedChunks)) compared")
        }
        return lines
    }

    /// The lines `repair` prints after rewriting stale parity in place.
    static func repairLines(_ report: ParityReport) -> [String] {
        var lines = report.staleChunks.map { "parity: rewrote \($0)" }
        lines += unreadableLines(report)
        if report.staleChunks.isEmpty {
            lines.append("parity: matched the records in \(chunks(report.checkedChunks)) compared; nothing to rewrite")
        }
        return lines
    }

    /// The report as `verify --json` shows it; `null` when not compared.
    static func json(_ report: ParityReport?) -> JSONValue {
        guard let report else { return .null }
        func range(_ range: Range<Int>) -> JSONValue {
            .object(["start": .integer(Int64(range.lowerBound)), "end": .integer(Int64(range.upperBound))])
        }
        let stale = report.staleChunks.map { chunk -> JSONValue in
            .object([
                "chunk": .integer(Int64(chunk.chunk)), "dataFileBytes": range(chunk.dataRange), "parityFileBytes": range(chunk.parityRange),
                "inCommitSlot": .boolean(chunk.isInCommitSlot), "differingBytes": .integer(Int64(chunk.differingBytes)),
            ])
        }
        return .object([
            "checkedChunks": .integer(Int64(report.checkedChunks)), "stale": .array(stale),
            "unreadableChunks": .array(report.unreadableChunks.map { .integer(Int64($0)) }),
        ])
    }

    private static func unreadableLines(_ report: ParityReport) -> [String] {
        report.unreadableChunks.map {
            "parity: log chunk \($0) could not all be read now (I/O error), so its parity was not compared"
        }
    }

    private static func chunks(_ count: Int) -> String { "\(count) chunk\(count == 1 ? "" : "s")" }
}
