#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeychainCrypto
import KeychainFile

/// `kcf-bench merge`: merging two copies of one keychain that differ in some items (SPEC.md §43), beside opening each
/// copy. The copies come from one bulk-loaded base: OURS changes half of the differing items' secrets, THEIRS changes a
/// quarter, adds an eighth and deletes an eighth, each in one batch. Each merge writes into a fresh byte copy of OURS.
/// Three merges: without a base given (the copies' logs share the bulk load's commit, SPEC.md §43.9), without one and
/// with no shared history (THEIRS compacted, §43.3), and with the base given (§43.6).
func runMergeBenchmark(sizes: [Int], differing: Int, formatVersion: Int, trials: Int = 3) throws {
    var report = Report(title: "kcf-bench merge (format version \(formatVersion), raw key)", machine: machineDescription())
    for size in sizes {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = Credential.key(SymmetricKey(size: .bits256))
        let options = Keychain.OpenOptions(autoCompaction: .disabled)
        let base = directory.path + "/base.kcf", ours = directory.path + "/ours.kcf", theirs = directory.path + "/theirs.kcf"
        do {
            var creation = Keychain.CreationOptions(autoCompaction: .disabled)
            creation.formatVersion = formatVersion
            let keychain = try Keychain.create(at: base, credential: key, options: creation)
            try keychain.batch { (batch) throws(KeychainError) in
                for index in 0..<size { _ = try batch.add(BenchmarkItem.make(index)) }
            }
        }
        try copyFile(base, ours)
        try copyFile(base, theirs)
        let changedHere = differing / 2, changedThere = differing / 4, added = differing / 8, deleted = differing - changedHere - changedThere - differing / 8
        try edit(ours, key: key, options: options) { (batch) throws(KeychainError) in
            for index in 0..<changedHere { try change(&batch, BenchmarkItem.make(index * 2 % size), "ours") }
        }
        try edit(theirs, key: key, options: options) { (batch) throws(KeychainError) in
            for index in 0..<changedThere { try change(&batch, BenchmarkItem.make((index * 2 + 1) % size), "theirs") }
            for index in 0..<added { _ = try batch.add(BenchmarkItem.make(size + index)) }
            for index in 0..<deleted {
                let item = BenchmarkItem.make((size - 1 - index * 2) % size)
                _ = try batch.delete(Query.genericPassword(service: item.service, account: item.account))
            }
        }

        func bestOpen(_ path: String) throws -> Double {
            var best = UInt64.max
            for _ in 0..<trials {
                let start = monotonicNanoseconds()
                let keychain = try Keychain.open(at: path, credential: key, options: options)
                best = min(best, monotonicNanoseconds() - start)
                guard keychain.count > 0 else { throw BenchmarkFailure("merge: an empty copy") }
            }
            return Double(best) / 1e6
        }
        let openOurs = try bestOpen(ours), openTheirs = try bestOpen(theirs)
        report.add("\(size) items, \(differing) differ: open OURS (best of \(trials))", openOurs, "ms")
        report.add("\(size) items, \(differing) differ: open THEIRS (best of \(trials))", openTheirs, "ms")
        let theirsCompacted = directory.path + "/theirs-compacted.kcf"
        try copyFile(theirs, theirsCompacted)
        _ = try Keychain.open(at: theirsCompacted, credential: key, options: options).compact()
        for mode in MergeMode.allCases {
            let withBase = mode == .withBase
            var bestMerge = UInt64.max, bestTotal = UInt64.max
            var last: MergeReport? = nil
            for trial in 0..<trials {
                let target = directory.path + "/merged-\(withBase)-\(trial).kcf"
                try copyFile(ours, target)
                let start = monotonicNanoseconds()
                let merged = try Keychain.open(at: target, credential: key, options: options)
                let other = try Keychain.open(at: mode == .noSharedHistory ? theirsCompacted : theirs, credential: key, options: options)
                let ancestor = withBase ? try Keychain.open(at: base, credential: key, options: options) : nil
                let opened = monotonicNanoseconds()
                last = try merged.merge(from: other, base: ancestor)
                let end = monotonicNanoseconds()
                bestMerge = min(bestMerge, end - opened)
                bestTotal = min(bestTotal, end - start)
            }
            // With a base, given or shared, exactly THEIRS's edits come in; with neither, each version changed on one side
            // only is also kept as a conflict copy (SPEC.md §43.3), so only the deletions are exact.
            guard let report0 = last else { throw BenchmarkFailure("merge: no trial ran") }
            let exact = report0.changed == changedThere && report0.added == added && report0.conflicts.isEmpty
            guard report0.deleted == deleted, mode == .noSharedHistory || exact, (report0.sharedHistoryEnd != nil) == (mode == .sharedHistory) else {
                throw BenchmarkFailure("merge \(mode.rawValue): \(report0.added) added, \(report0.changed) changed, \(report0.deleted) deleted")
            }
            let label = mode.rawValue
            report.add("\(size) items, \(differing) differ: merge \(label), copies open (best of \(trials))", Double(bestMerge) / 1e6, "ms")
            report.add(
                "\(size) items, \(differing) differ: open OURS, THEIRS\(withBase ? ", BASE" : "") and merge \(label) (best of \(trials))",
                Double(bestTotal) / 1e6, "ms")
            report.add(
                "\(size) items, \(differing) differ: merge \(label), copies open ÷ (open OURS + open THEIRS)",
                Double(bestMerge) / 1e6 / (openOurs + openTheirs), "×")
        }
    }
    report.print(json: false)
}

private func change(_ batch: inout Batch, _ item: GenericPassword, _ side: String) throws(KeychainError) {
    let query = Query.genericPassword(service: item.service, account: item.account)
    try batch.update(query, setting: [:], secret: Array("\(side) \(item.account)".utf8))
}

private func edit(_ path: String, key: Credential, options: Keychain.OpenOptions, _ body: (inout Batch) throws(KeychainError) -> Void) throws {
    let keychain = try Keychain.open(at: path, credential: key, options: options)
    try keychain.batch { (batch) throws(KeychainError) in try body(&batch) }
}

private func copyFile(_ source: String, _ destination: String) throws {
    try? FileManager.default.removeItem(atPath: destination)
    try FileManager.default.copyItem(atPath: source, toPath: destination)
}

/// The three merges `kcf-bench merge` times.
private enum MergeMode: String, CaseIterable {
    case sharedHistory = "no base given, history shared"
    case noSharedHistory = "no base, THEIRS compacted"
    case withBase = "with base"
}
