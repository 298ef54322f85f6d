import KeychainFile

/// What `kcf merge` and `kcf sync-conflicts` print of a merge (``MergeReport``): the counts, one line per new
/// conflict, each version a deletion here overrode, and the credentials carried over or left.
enum MergeReportText {
    /// The lines for a merge of `theirs` into `into` (each a name as it should be printed).
    static func lines(_ report: MergeReport, theirs: String, into: String) -> [String] {
        var lines: [String] = []
        if report.holdsEverything && report.conflicts.isEmpty {
            lines.append("\(into) already holds everything in \(theirs); nothing to do")
        } else {
            lines.append(
                "merged \(theirs) into \(into): \(report.added) added, \(report.changed) changed, \(report.deleted) deleted, "
                    + "\(report.tombstones) deletions recorded, \(report.conflicts.count) conflicts")
        }
        for conflict in report.conflicts { lines.append("conflict: \(conflict)") }
        for id in report.overruled {
            lines.append("not kept: item \(id) of \(theirs): its version is older than its deletion in \(into) (by modification time)")
        }
        if report.credentialsCarried > 0 { lines.append("carried \(report.credentialsCarried) credentials over from \(theirs)") }
        if report.credentialsNotCarried > 0 {
            lines.append(
                "not carried: \(report.credentialsNotCarried) credentials \(theirs) has and \(into) lacks (without a base, one added "
                    + "there cannot be told from one removed here; kcf add-credential to add one)")
        }
        return lines
    }
}
