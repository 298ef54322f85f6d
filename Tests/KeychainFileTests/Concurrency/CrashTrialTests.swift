import Foundation
import Testing

/// Process kills: a `kcf-worker chaos` child adds, updates, deletes, batches, compacts and changes the
/// password, acknowledging each step; the test kills it with SIGKILL at random moments — also right inside
/// compactions and credential changes — reopens the file and checks that every acknowledged step is there,
/// the step in flight is all or nothing, nothing else is, and exactly the right password opens it
/// (CrashTrial.swift, CrashModel.swift).
///
/// The trials run on files of format version 1 and of format version 2; for version 2 a tear also erases or
/// keeps the commit slot the step in flight wrote (CrashSlotTear.swift).
///
/// CI runs a bounded number of trials; `KCF_CRASH_TRIALS=N` runs N of each version (Scripts/crash-trials.sh),
/// `KCF_CRASH_FORMAT=V` only version V, and `KCF_CRASH_SEED=S` replays one trial. Each trial's seed and
/// version are in its failure message.
@Suite("Crash trials: workers killed with SIGKILL lose no acknowledged operation", .serialized)
struct CrashTrialTests {
    /// Trials per CI run and format version: about 30 s each in release mode on the 2-core development
    /// machine (0.2-0.4 s a trial: three worker runs of up to 40 steps, and five or so reopenings).
    static let trialsInCI = [1: 80, 2: 80]

    /// The format versions to run: both, or the one `KCF_CRASH_FORMAT` names.
    static var formatVersions: [Int] {
        ProcessInfo.processInfo.environment["KCF_CRASH_FORMAT"].flatMap { Int($0) }.map { [$0] } ?? [1, 2]
    }

    @Test("Killed workers: every acknowledged step survives, the step in flight is all or nothing, one password opens",
          arguments: formatVersions)
    func killedWorkers(formatVersion: Int) throws {
        let environment = ProcessInfo.processInfo.environment
        try #require(Self.trialsInCI[formatVersion] != nil, "KCF_CRASH_FORMAT must be 1 or 2")
        let seeds: [UInt64]
        if let replay = environment["KCF_CRASH_SEED"] {
            seeds = [try #require(UInt64(replay), "KCF_CRASH_SEED must be a decimal number")]
        } else {
            let count = try environment["KCF_CRASH_TRIALS"].map { try #require(Int($0), "KCF_CRASH_TRIALS must be a count") }
                ?? Self.trialsInCI[formatVersion]!
            let base = environment["KCF_CRASH_BASE_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0..<(1 << 48))
            print("crash-trials: format \(formatVersion): base seed \(base) (KCF_CRASH_BASE_SEED=\(base) repeats the steps and kill plans)")
            var generator = TestRandom(seed: base)
            seeds = (0..<count).map { _ in generator.next() >> 16 }
        }

        let start = Date()
        var tally = CrashTally()
        for seed in seeds {
            let trial = CrashTrial(seed: seed, formatVersion: formatVersion).run()
            tally.add(trial)
            for failure in trial.failures { Issue.record(Comment(rawValue: failure)) }
        }
        let seconds = Date().timeIntervalSince(start)
        print("crash-trials: format \(formatVersion): \(String(format: "%.1f", seconds)) s")
        for line in tally.summary { print("crash-trials: format \(formatVersion): \(line)") }

        #expect(tally.lostOperations == 0)
        #expect(tally.halfApplied == 0)
        #expect(tally.phantoms == 0)
        #expect(tally.otherFailures == 0)
        #expect(tally.failures.isEmpty)
        #expect(tally.kills > 0)
        // Enough trials must have reached the moments the trials are for; a change that made the kills miss
        // them (a worker that no longer compacts, a plan that never fires) fails here.
        if seeds.count >= 30 {
            #expect(tally.inFlight["compact", default: 0] > 0, "no kill landed inside a compaction")
            #expect(tally.inFlight["credential", default: 0] > 0, "no kill landed inside a credential change")
            #expect(tally.inFlight["batch", default: 0] > 0, "no kill landed inside a batch")
            #expect(tally.tears > 0, "no tail was torn")
            if formatVersion == 2 && seeds.count >= Self.trialsInCI[2]! {
                #expect(tally.slotsErased + tally.slotsKept > 0, "no tear met a commit slot the step in flight wrote")
            }
        }
    }
}
