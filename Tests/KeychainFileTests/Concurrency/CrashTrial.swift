import Foundation
@testable import KeychainFile

/// Counts of what crash trials did and found.
struct CrashTally {
    var trials = 0
    var segments = 0
    var kills = 0
    var completedRuns = 0
    var acknowledgedSteps = 0
    /// Kills that landed while a step was in flight, by the step's kind, and how many of those steps took
    /// effect anyway.
    var inFlight: [String: Int] = [:]
    var inFlightApplied: [String: Int] = [:]
    /// Kills that landed before the worker printed `open`.
    var killsBeforeOpen = 0
    /// Files cut or zeroed after the last acknowledged record, and how many of those reopened reporting a torn
    /// tail; torn tails that the kill alone left.
    var tears = 0
    var tornTailsReported = 0
    var tornTailsFromKills = 0
    /// Temporary files of interrupted rewrites found beside the keychain after a kill.
    var strayTemporaryFiles = 0
    /// Format version 2 tears: the commit slot the step in flight wrote was erased, or kept while its records
    /// were torn; of the kept ones, how many the slot's parity repaired (the step applied) and how many left
    /// the records set aside (the file then refuses writes, and the trial ends).
    var slotsErased = 0
    var slotsKept = 0
    var keptSlotsRepaired = 0
    var setAside = 0
    /// Version 1 tails kept as possibly acknowledged because the lock file's acknowledgement was older than them.
    var keptAfterStaleAcknowledgement = 0
    var reopenChecks = 0
    var lostOperations = 0
    var halfApplied = 0
    var phantoms = 0
    var otherFailures = 0
    var failures: [String] = []

    mutating func add(_ other: CrashTally) {
        trials += other.trials
        segments += other.segments
        kills += other.kills
        completedRuns += other.completedRuns
        acknowledgedSteps += other.acknowledgedSteps
        inFlight.merge(other.inFlight, uniquingKeysWith: +)
        inFlightApplied.merge(other.inFlightApplied, uniquingKeysWith: +)
        killsBeforeOpen += other.killsBeforeOpen
        tears += other.tears
        tornTailsReported += other.tornTailsReported
        tornTailsFromKills += other.tornTailsFromKills
        strayTemporaryFiles += other.strayTemporaryFiles
        slotsErased += other.slotsErased
        slotsKept += other.slotsKept
        keptSlotsRepaired += other.keptSlotsRepaired
        setAside += other.setAside
        keptAfterStaleAcknowledgement += other.keptAfterStaleAcknowledgement
        reopenChecks += other.reopenChecks
        lostOperations += other.lostOperations
        halfApplied += other.halfApplied
        phantoms += other.phantoms
        otherFailures += other.otherFailures
        failures += other.failures
    }

    /// Lines for people; the last one is "N trials, K lost operations".
    var summary: [String] {
        let kinds = ["add", "update", "delete", "batch", "compact", "credential"]
        let flight = kinds.map { "\($0) \(inFlight[$0] ?? 0) (applied \(inFlightApplied[$0] ?? 0))" }.joined(separator: ", ")
        return [
            "\(segments) worker runs: \(kills) killed, \(completedRuns) ran to the end; \(acknowledgedSteps) steps acknowledged",
            "kills in flight: \(flight); before open \(killsBeforeOpen)",
            "tails torn after a kill: \(tears), torn tail reported on reopening \(tornTailsReported) (kept as possibly acknowledged, the acknowledgement older than them: \(keptAfterStaleAcknowledgement)); torn tails left by kills alone \(tornTailsFromKills); stray temporary files found \(strayTemporaryFiles)",
            "commit slots of the step in flight (format 2): erased \(slotsErased), kept while its records were torn \(slotsKept) (repaired from the slot's parity \(keptSlotsRepaired), set aside \(setAside))",
            "reopen checks: \(reopenChecks); half-applied \(halfApplied), phantom \(phantoms), other failures \(otherFailures)",
            "\(trials) trials, \(lostOperations) lost operations",
        ]
    }
}

/// One crash trial: a keychain file, and several `kcf-worker chaos` runs on it in turn, each killed with
/// SIGKILL at a seeded random moment (or let finish). After each run the file is reopened and checked against
/// the model of what the worker acknowledged (CrashChecker); sometimes the bytes after the last acknowledged
/// record are then cut or zeroed, as a crash in the middle of that write could leave them, and the file is
/// checked again — it must then show the step in flight not applied, and report a torn tail, which the next
/// run's first write cuts off. The trial ends with a compaction and a last check.
///
/// The seed fixes the workers' steps and the kill plans; where a kill lands depends on timing, so a replay
/// runs the same steps with similar, not identical, kills.
struct CrashTrial {
    static let passwords = ("crash trial password one", "crash trial password two")

    let seed: UInt64
    /// The format version the trial creates the file in; the workers and checks open whatever it is.
    var formatVersion = 1
    var runsPerTrial = 3
    var stepsPerRun = 40

    private var context: String {
        "format \(formatVersion) trial seed \(seed) (replay: KCF_CRASH_FORMAT=\(formatVersion) KCF_CRASH_SEED=\(seed))"
    }

    /// How a worker run ended, when its checks passed.
    enum RunEnd {
        /// The file holds `model`; the next run goes on from it.
        case next(CrashModel)
        /// A tear left the newest commit's records set aside: the file refuses writes until it is repaired.
        case setAside
    }

    func run() -> CrashTally {
        var tally = CrashTally()
        tally.trials = 1
        var random = TestRandom(seed: seed)
        let directory = TemporaryDirectory()
        let path = directory.file("chaos.kcf")
        do {
            var options = TestKeychain.fastOptions
            options.formatVersion = formatVersion
            let keychain = try Keychain.create(at: path, credential: .password(Self.passwords.0), options: options)
            let created = keychain.withLock { keychain.log.formatVersion }
            guard created == formatVersion else {
                tally.failures.append("\(context): the keychain was created in format version \(created)")
                return tally
            }
        } catch {
            tally.failures.append("\(context): creating the keychain failed: \(error)")
            return tally
        }
        var model = CrashModel()
        model.formatVersion = formatVersion
        for run in 0..<runsPerTrial {
            let workerSeed = random.next() >> 16
            let plan = Self.plan(using: &random, steps: stepsPerRun)
            let where_ = "\(context), run \(run), worker seed \(workerSeed), \(plan)"
            switch runWorker(
                path: path, directory: directory, seed: workerSeed, plan: plan, model: model, random: &random,
                tally: &tally, context: where_) {
            case nil, .setAside?: return tally
            case .next(let next)?: model = next
            }
        }
        finalCheck(path: path, model: model, tally: &tally)
        return tally
    }

    /// One worker run, its checks, and perhaps a torn tail; returns how the file stands afterwards, or `nil`
    /// after a failure (recorded in `tally`).
    private func runWorker(
        path: String, directory: TemporaryDirectory, seed workerSeed: UInt64, plan: ChaosWorkerProcess.KillPlan,
        model: CrashModel, random: inout TestRandom, tally: inout CrashTally, context: String
    ) -> RunEnd? {
        func fail(_ text: String, _ lines: [String] = []) -> RunEnd? {
            let tail = lines.suffix(8).map { "    \($0)" }.joined(separator: "\n")
            tally.failures.append("\(context): \(text)" + (tail.isEmpty ? "" : "\n  last worker lines:\n\(tail)"))
            return nil
        }
        tally.segments += 1
        // Where the verified log ends before the worker starts. A file that a tear left short of its newest
        // commit's records, repaired from that commit's parity, reads whole but is shorter than that: the worker
        // reports its size as the end until its first write puts the repaired bytes back. That commit is in the
        // model, so no tear may cut below this end or take its commit slot for the step in flight's.
        let startEnd = CrashSlotTear.verifiedEnd(path, password: Self.password(model.password))
        let outcome: ChaosWorkerProcess.Outcome
        do {
            let worker = try ChaosWorkerProcess(
                arguments: ["chaos", path, "\(workerSeed)", "\(stepsPerRun)"], passwords: Self.passwords, in: directory)
            outcome = worker.run(plan)
        } catch {
            return fail("starting the worker failed: \(error)")
        }
        if outcome.timedOut { return fail("the worker did not finish in time", outcome.lines) }
        let killedBySignal = outcome.killed && outcome.endedBySignal && outcome.status == SIGKILL
        if killedBySignal {
            tally.kills += 1
        } else if outcome.endedBySignal || outcome.status != 0 {
            return fail("the worker failed (status \(outcome.status)): \(outcome.errorText)", outcome.lines)
        } else {
            tally.completedRuns += 1
        }

        let transcript: CrashTranscript
        do {
            transcript = try CrashTranscript(lines: outcome.lines)
        } catch {
            return fail("unreadable worker output: \(error)", outcome.lines)
        }
        if !killedBySignal && !transcript.finished { return fail("the worker exited without finishing", outcome.lines) }

        // The model of the acknowledged steps.
        var acknowledged = model
        acknowledged.lastChange = [:]
        acknowledged.lastRewrite = nil
        acknowledged.lastCredentialChange = nil
        if let opening = transcript.opening {
            guard opening.password == model.password, opening.epoch == model.epoch else {
                return fail("the worker opened the file with password \(opening.password) in epoch \(opening.epoch); the model says \(model.password), \(model.epoch)", outcome.lines)
            }
        } else {
            tally.killsBeforeOpen += 1
        }
        let automatic = transcript.opening?.automaticCompaction ?? false
        for step in transcript.acknowledged {
            do {
                acknowledged = try acknowledged.applying(step.step, sequence: step.sequence)
            } catch {
                return fail("\(error)", outcome.lines)
            }
            // A commit may compact on its own (auto-compaction): the epoch the worker saw is then one more.
            if case .items = step.step, automatic, step.epoch == acknowledged.epoch + 1 {
                acknowledged.epoch = step.epoch
                acknowledged.formatVersion = 2
                acknowledged.lastRewrite = step.sequence
            }
            guard step.epoch == acknowledged.epoch else {
                return fail("after step \(step.sequence) the worker saw epoch \(step.epoch); the model says \(acknowledged.epoch)", outcome.lines)
            }
        }
        tally.acknowledgedSteps += transcript.acknowledged.count
        let pending = killedBySignal ? transcript.pending : nil
        if killedBySignal, let pending { tally.inFlight[pending.step.kind, default: 0] += 1 }
        var pendingIsItems = false
        if case .items? = pending?.step { pendingIsItems = true }

        // Reopen and check.
        tally.strayTemporaryFiles += Self.temporaryFiles(in: directory).count
        let observed = Self.observe(path)
        tally.reopenChecks += 1
        if observed.tornTail { tally.tornTailsFromKills += 1 }
        let verdict = CrashChecker.check(
            acknowledged: acknowledged, pending: pending, observed: observed, pendingMayRewrite: pendingIsItems && automatic)
        guard record(verdict, in: &tally) else { return fail(verdict.problems.joined(separator: "\n  "), outcome.lines) }
        if let pending, verdict.pendingApplied == true { tally.inFlightApplied[pending.step.kind, default: 0] += 1 }
        if !Self.temporaryFiles(in: directory).isEmpty {
            return fail("temporary files of an interrupted rewrite are still there after reopening: \(Self.temporaryFiles(in: directory))")
        }
        var resolved = acknowledged
        resolved.items = observed.items
        resolved.password = observed.opensWith[0]
        resolved.epoch = observed.epoch
        resolved.formatVersion = observed.formatVersion ?? acknowledged.formatVersion

        // Sometimes tear what the killed step appended after the last acknowledged record — as a power loss
        // could, unless the step made it durable and acknowledged it in the lock file (SPEC.md §16.1) before the
        // kill, and only the worker's "ack" line was lost: a power loss cannot take back what was synced.
        guard let reported = transcript.acknowledged.last?.end ?? transcript.opening?.end, observed.epoch == acknowledged.epoch,
              random.next() % 2 == 0, let size = Self.fileSize(path)
        else { return .next(resolved) }
        let lockEnd = Self.lockFileAcknowledgedEnd(path, epoch: observed.epoch) ?? reported
        let pendingDurable = lockEnd > reported
        let end = max(reported, lockEnd, startEnd.flatMap { $0.epoch == observed.epoch ? $0.end : nil } ?? 0)
        guard size > end else { return .next(resolved) }
        // Format version 2 says what is committed in its commit slots, not in the lock file. If the step in flight
        // wrote its slot, a power loss may have lost that slot too (it is erased: the step must not apply), or
        // kept it and lost some of its records (the step applies if the slot's parity repairs them, else they are
        // set aside, and writes are refused until a repair).
        var slotKept = false
        if observed.formatVersion == 2,
           let place = CrashSlotTear.pendingSlot(path, password: Self.password(observed.opensWith[0]), end: end) {
            if random.next() % 2 == 0 {
                slotKept = true
                tally.slotsKept += 1
            } else {
                guard CrashSlotTear.erase(path, slot: place) else { return fail("could not erase commit slot \(place)") }
                tally.slotsErased += 1
            }
        }
        // Cutting keeps 1 … n-1 of the n bytes after the end; zeroing overwrites 1 … n of them.
        let span = size - end
        let zeroes = span < 2 || random.next() % 2 == 0
        var cut = zeroes ? end + Int(random.next() % UInt64(span)) : end + 1 + Int(random.next() % UInt64(span - 1))
        // With its slot kept, the step's records may also be lost whole: parity then repairs all of them or none.
        if slotKept && random.next() % 2 == 0 { cut = end }
        guard Self.tear(path, at: cut, end: end, zeroes: zeroes) else { return fail("could not tear the file") }
        tally.tears += 1
        let torn = Self.observe(path)
        tally.reopenChecks += 1
        let tornVerdict = CrashChecker.check(
            acknowledged: acknowledged, pending: pending, observed: torn, pendingMayApply: pendingDurable || slotKept)
        let tearing = "after \(zeroes ? "zeroing" : "cutting") the file from byte \(cut) of \(size) (last acknowledged end \(end)"
            + (slotKept ? ", the step in flight's commit slot kept" : "") + ")"
        guard record(tornVerdict, in: &tally) else {
            return fail("\(tearing): " + tornVerdict.problems.joined(separator: "\n  "), outcome.lines)
        }
        if slotKept && tornVerdict.pendingApplied == true {
            tally.keptSlotsRepaired += 1
            var repaired = acknowledged
            repaired.items = torn.items
            return .next(repaired)
        }
        guard torn.tornTail else { return fail("\(tearing) the file opens without reporting a torn tail") }
        tally.tornTailsReported += 1
        if torn.tornTailMayHoldAcknowledgedData {
            // Version 1 can tell a torn record from an acknowledged one only by an acknowledgement that ends exactly
            // where it starts (SPEC.md §9.3). One that is older — an earlier worker was killed after syncing its
            // record and before acknowledging it, and no write acknowledged anything since — or none at all leaves
            // the final record possibly acknowledged, and it must be kept.
            let staleAcknowledgement = observed.formatVersion == 1 && Self.lockFileAcknowledgedEnd(path, epoch: observed.epoch) != end
            guard slotKept || staleAcknowledgement else {
                return fail("\(tearing) the torn tail is taken for records that may be acknowledged")
            }
            if let problem = CrashSlotTear.writesRefused(path, password: Self.password(torn.opensWith[0])) {
                return fail("\(tearing) the records after the last acknowledged one are kept as possibly acknowledged, but \(problem)")
            }
            if staleAcknowledgement { tally.keptAfterStaleAcknowledgement += 1 } else { tally.setAside += 1 }
            return .setAside
        }
        return .next(acknowledged)
    }

    static func password(_ number: Int) -> String {
        number == 1 ? passwords.0 : passwords.1
    }

    /// The end offset the lock file's acknowledgement block (SPEC.md §16.1) gives for `epoch`, read without
    /// checking its MAC (the test only needs to know how far the worker synced); `nil` if it has none.
    static func lockFileAcknowledgedEnd(_ path: String, epoch: UInt64) -> Int? {
        guard let lock = try? fileBytes(path + ".lock"), lock.count >= Acknowledgement.offset + Acknowledgement.size else { return nil }
        let block = Array(lock[Acknowledgement.offset..<(Acknowledgement.offset + Acknowledgement.size)])
        func u64(_ at: Int) -> UInt64 { block[at..<(at + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        guard Array(block[0..<4]) == Acknowledgement.magic, u64(20) == epoch else { return nil }
        return Int(u64(36))
    }

    /// Adds a verdict's findings to the tally; false if it found anything.
    private func record(_ verdict: CrashVerdict, in tally: inout CrashTally) -> Bool {
        tally.lostOperations += verdict.lostOperations.count
        tally.halfApplied += verdict.halfApplied.count
        tally.phantoms += verdict.phantom.count
        tally.otherFailures += verdict.other.count
        return verdict.isClean
    }

    /// The last run leaves a file that compacts and then still holds exactly the model.
    private func finalCheck(path: String, model: CrashModel, tally: inout CrashTally) {
        let password = Self.password(model.password)
        do {
            try Keychain.open(at: path, credential: .password(password)).compact()
        } catch {
            tally.failures.append("\(context): the final compaction failed: \(error)")
            tally.otherFailures += 1
            return
        }
        var compacted = model
        compacted.epoch += 1
        compacted.formatVersion = 2
        let verdict = CrashChecker.check(acknowledged: compacted, pending: nil, observed: Self.observe(path))
        tally.reopenChecks += 1
        if !record(verdict, in: &tally) {
            tally.failures.append("\(context): after the final compaction: \(verdict.problems.joined(separator: "\n  "))")
        }
    }

    /// A kill plan: let it finish, kill after a delay, or right (or a little) after a `begin` line — any
    /// step, a compaction, a credential change or a batch. Compactions and credential changes take some
    /// 5–50 ms here, single steps a few.
    static func plan(using random: inout TestRandom, steps: Int) -> ChaosWorkerProcess.KillPlan {
        func uniform(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
        func delay(upTo limit: Int) -> Int { uniform(0...3) == 0 ? 0 : uniform(0...limit) }
        switch uniform(0...99) {
        case 0..<6: return .never
        case 6..<34: return .afterDelay(microseconds: uniform(0...300_000))
        case 34..<60: return .afterBegin(kind: nil, nth: uniform(1...steps), microseconds: delay(upTo: 5_000))
        case 60..<78: return .afterBegin(kind: "compact", nth: uniform(1...3), microseconds: delay(upTo: 50_000))
        case 78..<94: return .afterBegin(kind: "credential", nth: uniform(1...2), microseconds: delay(upTo: 50_000))
        default: return .afterBegin(kind: "batch", nth: uniform(1...4), microseconds: delay(upTo: 5_000))
        }
    }

    /// Opens the file with each password and reads every chaos item with its secret.
    static func observe(_ path: String) -> CrashObservation {
        var observation = CrashObservation()
        var opened: Keychain? = nil
        for (number, password) in [(1, passwords.0), (2, passwords.1)] {
            do {
                let keychain = try Keychain.open(at: path, credential: .password(password))
                observation.opensWith.append(number)
                if opened == nil { opened = keychain }
            } catch {
                if case .wrongCredentials = error { continue }
                observation.errors.append("opening with password \(number): \(error)")
            }
        }
        guard let keychain = opened else { return observation }
        observation.tornTail = keychain.tornTail != nil
        observation.tornTailMayHoldAcknowledgedData = keychain.tornTail?.mayHoldAcknowledgedData == true
        observation.formatVersion = keychain.withLock { keychain.log.formatVersion }
        do {
            let statistics = try keychain.statistics()
            observation.epoch = statistics.epoch
            observation.itemCount = statistics.itemCount
            guard statistics.itemCount > 0 else { return observation }
            let found = try keychain.find(GenericPassword.self, matching: .genericPassword(service: "chaos"))
            for item in found {
                if observation.items[item.account] != nil { observation.errors.append("\(item.account) is there twice") }
                observation.items[item.account] = CrashItem(
                    secret: item.value ?? [], label: item.label ?? "", comment: item.comment ?? "")
            }
        } catch {
            if case .itemNotFound = error { return observation }
            observation.errors.append("reading the items: \(error)")
        }
        return observation
    }

    static func temporaryFiles(in directory: TemporaryDirectory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.contains(".tmp-") }
    }

    static func fileSize(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }

    /// Cuts the file at `offset`, or overwrites it with zeros from there to its end — from `end` instead if
    /// the bytes from `offset` on are zeros already (a record's frame starts with a non-zero length).
    static func tear(_ path: String, at offset: Int, end: Int, zeroes: Bool) -> Bool {
        guard let handle = FileHandle(forUpdatingAtPath: path) else { return false }
        defer { try? handle.close() }
        do {
            if zeroes {
                let size = Int(try handle.seekToEnd())
                try handle.seek(toOffset: UInt64(offset))
                let tail = try handle.readToEnd() ?? Data()
                let offset = tail.allSatisfy { $0 == 0 } ? end : offset
                try handle.seek(toOffset: UInt64(offset))
                try handle.write(contentsOf: Data(count: size - offset))
            } else {
                try handle.truncate(atOffset: UInt64(offset))
            }
            return true
        } catch {
            return false
        }
    }
}
