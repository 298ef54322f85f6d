import KeychainFile

/// What `kcf merge` and `kcf sync-conflicts` print of a merge (``MergeReport``): the counts, the base the logs gave,
/// one line per new conflict, each version a deletion here overrode, and the credentials carried over or left.
enum MergeReportText {
    /// The lines for a merge of `theirs` into `into` (each a name as it should be printed); `baseGiven` when the merge
    /// was given a base or imported another keychain, so that the copies' logs were not compared.
    static func lines(_ report: MergeReport, theirs: String, into: String, baseGiven: Bool = false) -> [String] {
        var lines: [String] = []
        if report.holdsEverything && report.conflicts.isEmpty {
            lines.append("\(into) already holds everything in \(theirs); nothing to do")
        } else {
            lines.append(
                "merged \(theirs) into \(into): \(report.added) added, \(report.changed) changed, \(report.deleted) deleted, "
                    + "\(report.tombstones) deletions recorded, \(report.conflicts.count) conflicts")
        }
        if let end = report.sharedHistoryEnd, !report.isUnchanged || !report.conflicts.isEmpty {
            lines.append("base: the history both copies share (their logs hold the same records up to log byte \(end))")
        } else if report.sharedHistoryEnd == nil, !baseGiven, !report.conflicts.isEmpty {
            lines.append(
                "no base: the copies share no history this merge could use (one was compacted or its password changed since "
                    + "they parted, or a copy was read with recovery or changed meanwhile), so a version changed on one side only "
                    + "is kept as a conflict copy too; --base names the copy both came from")
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
