import Foundation
import Testing

/// Process kills: a `kcf-worker chaos` child adds, updates, deletes, batches, compacts and changes the
/// password, acknowledging each step; the test kills it with SIGKILL at random moments — also right inside
/// compactions and credential changes — reopens the file and checks that every acknowledged step is there,
/// the step in flight is all or nothing, nothing else is, and exactly the right password opens it
/// (CrashTrial.swift, CrashModel.swift).
///
/// CI runs a bounded number of trials; `KCF_CRASH_TRIALS=N` runs N (Scripts/crash-trials.sh), and
/// `KCF_CRASH_SEED=S` replays one trial. Each trial's seed is in its failure message.
@Suite("Crash trials: workers killed with SIGKILL lose no acknowledged operation", .serialized)
struct CrashTrialTests {
    /// Trials per CI run: about 30 s in release mode on the 2-core development machine (0.35-0.4 s each:
    /// three worker runs of up to 40 steps, and five or so reopenings).
    static let trialsInCI = 80

    @Test("Killed workers: every acknowledged step survives, the step in flight is all or nothing, one password opens")
    func killedWorkers() throws {
        let environment = ProcessInfo.processInfo.environment
        let seeds: [UInt64]
        if let replay = environment["KCF_CRASH_SEED"] {
            seeds = [try #require(UInt64(replay), "KCF_CRASH_SEED must be a decimal number")]
        } else {
            let count = try environment["KCF_CRASH_TRIALS"].map { try #require(Int($0), "KCF_CRASH_TRIALS must be a count") }
                ?? Self.trialsInCI
            let base = environment["KCF_CRASH_BASE_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0..<(1 << 48))
            print("crash-trials: base seed \(base) (KCF_CRASH_BASE_SEED=\(base) repeats the steps and kill plans)")
            var generator = TestRandom(seed: base)
            seeds = (0..<count).map { _ in generator.next() >> 16 }
        }

        let start = Date()
        var tally = CrashTally()
        for seed in seeds {
            let trial = CrashTrial(seed: seed).run()
            tally.add(trial)
            for failure in trial.failures { Issue.record(Comment(rawValue: failure)) }
        }
        let seconds = Date().timeIntervalSince(start)
        print("crash-trials: \(String(format: "%.1f", seconds)) s")
        for line in tally.summary { print("crash-trials: \(line)") }

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
        }
    }
}
