/// What a keychain must hold after the crash trials' acknowledged steps: the chaos items, the password that
/// opens it, and its epoch.
struct CrashModel: Equatable {
    var items: [String: CrashItem] = [:]
    /// The one password (1 or 2) that opens the file.
    var password = 1
    /// The file's epoch; a rewrite (compaction, credential change) adds one.
    var epoch: UInt64 = 1
    /// The file's format version: appends keep it; a rewrite makes a version 1 file version 2 (SPEC.md §12).
    var formatVersion = 1
    /// For each account, the sequence number of the last acknowledged step that changed it (in the current
    /// segment), so that a missing effect is counted against one operation.
    var lastChange: [String: Int] = [:]
    /// The sequence numbers of the last acknowledged rewrite and credential change (in the current segment).
    var lastRewrite: Int?
    var lastCredentialChange: Int?

    /// The model after `step`. Item changes apply in order; the worker only writes steps that are valid
    /// against its own view, so a change that does not fit the model is a broken transcript.
    func applying(_ step: CrashStep, sequence: Int) throws -> CrashModel {
        var next = self
        switch step {
        case .items(let changes, _):
            for change in changes {
                switch change {
                case .add(let account, let item):
                    guard next.items[account] == nil else { throw ModelError.inconsistent("add of existing \(account) in step \(sequence)") }
                    next.items[account] = item
                case .update(let account, let item):
                    guard next.items[account] != nil else { throw ModelError.inconsistent("update of missing \(account) in step \(sequence)") }
                    next.items[account] = item
                case .delete(let account):
                    guard next.items[account] != nil else { throw ModelError.inconsistent("delete of missing \(account) in step \(sequence)") }
                    next.items[account] = nil
                }
                next.lastChange[change.account] = sequence
            }
        case .compact:
            next.epoch += 1
            next.formatVersion = 2
            next.lastRewrite = sequence
        case .credential(let password, _):
            next.password = password
            // On a version 1 file the upgrade and the change are one rewrite.
            next.epoch += 1
            next.formatVersion = 2
            next.lastRewrite = sequence
            next.lastCredentialChange = sequence
        }
        return next
    }

    enum ModelError: Error, CustomStringConvertible {
        case inconsistent(String)
        var description: String {
            switch self {
            case .inconsistent(let text): return "the transcript does not fit the model: \(text)"
            }
        }
    }
}

/// What a reopened keychain holds, as the trial read it.
struct CrashObservation: Equatable {
    /// Which of the two passwords opened the file.
    var opensWith: [Int] = []
    /// Errors other than `wrongCredentials` that opening or reading gave.
    var errors: [String] = []
    var items: [String: CrashItem] = [:]
    /// The item count the keychain reports (all classes): anything besides the chaos items shows here.
    var itemCount = 0
    var epoch: UInt64 = 0
    var tornTail = false
    /// Whether the torn tail is records the newest commit names that do not verify (set aside: never cut).
    var tornTailMayHoldAcknowledgedData = false
    /// The format version the file opened as, when it opened.
    var formatVersion: Int? = nil
}

/// The checker's findings for one reopened file.
struct CrashVerdict {
    /// Acknowledged operations whose effect is missing or wrong, by sequence number, each counted once; -1
    /// stands for an operation of an earlier segment.
    var lostOperations: Set<Int> = []
    var lost: [String] = []
    /// The step in flight was partly applied.
    var halfApplied: [String] = []
    /// Items no step wrote, or that the step in flight may not have written.
    var phantom: [String] = []
    /// The file does not open, opens with both passwords, gave errors, or changed epoch without reason.
    var other: [String] = []
    /// Whether the step in flight took effect (`nil` when there was none, or its effect cannot be seen).
    var pendingApplied: Bool?

    var isClean: Bool { lost.isEmpty && halfApplied.isEmpty && phantom.isEmpty && other.isEmpty }

    var problems: [String] {
        lost.map { "lost: \($0)" } + halfApplied.map { "half-applied: \($0)" } + phantom.map { "phantom: \($0)" }
            + other.map { "other: \($0)" }
    }
}

/// Checks a reopened file against the model of the acknowledged steps and the step in flight.
///
/// The rules: every acknowledged change is visible (unless a later acknowledged one replaced it); the step
/// in flight is either wholly applied or not at all (`pendingMayApply` false: not at all); nothing else is
/// there; exactly one password opens the file, the acknowledged one or, while a credential change was in
/// flight, either; the epoch went back never, and forward only by a rewrite that was in flight.
enum CrashChecker {
    static func check(
        acknowledged model: CrashModel, pending: (sequence: Int, step: CrashStep)?, observed: CrashObservation,
        pendingMayApply: Bool = true, pendingMayRewrite: Bool = false
    ) -> CrashVerdict {
        var verdict = CrashVerdict()
        verdict.other = observed.errors
        guard !observed.opensWith.isEmpty else {
            verdict.other.append("neither password opens the file")
            return verdict
        }
        // Credentials.
        var allowedPasswords: Set<Int> = [model.password]
        var rewriteInFlight = pendingMayRewrite
        var rewritesInFlight = pendingMayRewrite ? 1 : 0
        if let pending, pendingMayApply {
            switch pending.step {
            case .credential(let password, _):
                allowedPasswords.insert(password)
                rewriteInFlight = true
                rewritesInFlight = 1
            case .compact:
                rewriteInFlight = true
                rewritesInFlight = 1
            case .items:
                break
            }
        }
        if let version = observed.formatVersion, version != model.formatVersion, !(rewriteInFlight && version == 2) {
            verdict.other.append("the file is of format version \(version); the acknowledged steps left version \(model.formatVersion), and no rewrite was in flight")
        }
        if observed.opensWith.count > 1 {
            verdict.other.append("both passwords open the file")
        } else if !allowedPasswords.contains(observed.opensWith[0]) {
            verdict.lost.append("password \(model.password) was acknowledged, but password \(observed.opensWith[0]) opens the file")
            verdict.lostOperations.insert(model.lastCredentialChange ?? -1)
        }
        if case .credential(let password, _)? = pending?.step, pendingMayApply, observed.opensWith == [password],
           password != model.password {
            verdict.pendingApplied = true
            if observed.epoch != model.epoch + UInt64(rewritesInFlight) {
                verdict.other.append("the credential change in flight took effect but the epoch is \(observed.epoch), not \(model.epoch + UInt64(rewritesInFlight))")
            }
        } else if case .credential(let password, _)? = pending?.step, pendingMayApply, password != model.password,
                  observed.epoch >= model.epoch + UInt64(rewritesInFlight) {
            // The change rewrites the file once (with the upgrade, on a version 1 file): its epoch must carry the new
            // slots.
            verdict.other.append("the credential change in flight rewrote the file (epoch \(observed.epoch)) but password \(password) does not open it")
        }

        // Epoch: never back; forward by one only if a rewrite was in flight.
        if observed.epoch < model.epoch {
            verdict.lost.append("epoch \(model.epoch) was acknowledged, the file is in epoch \(observed.epoch)")
            verdict.lostOperations.insert(model.lastRewrite ?? -1)
        } else if observed.epoch > model.epoch + UInt64(rewritesInFlight) {
            verdict.other.append("the file is in epoch \(observed.epoch); acknowledged \(model.epoch), rewrite in flight: \(rewriteInFlight)")
        }
        if case .compact? = pending?.step, pendingMayApply { verdict.pendingApplied = observed.epoch > model.epoch }

        // Items.
        if observed.itemCount != observed.items.count {
            verdict.phantom.append("the keychain counts \(observed.itemCount) items, \(observed.items.count) of them chaos items")
        }
        var after = model.items
        var touched: [String] = []
        if let pending, case .items(let changes, _) = pending.step {
            touched = changes.map(\.account)
            if pendingMayApply, let applied = try? model.applying(pending.step, sequence: pending.sequence) {
                after = applied.items
            }
        }
        let accounts = Set(model.items.keys).union(after.keys).union(observed.items.keys)
        var appliedTo: [String] = []
        var notAppliedTo: [String] = []
        for account in accounts.sorted() {
            let before = model.items[account]
            let pendingValue = after[account]
            let found = observed.items[account]
            let isTouched = touched.contains(account) && before != pendingValue
            if found == before {
                if isTouched { notAppliedTo.append(account) }
                continue
            }
            if found == pendingValue {
                if isTouched { appliedTo.append(account) }
                continue
            }
            if let found, let before, let pendingValue, isTouched {
                verdict.halfApplied.append("\(account): holds \(found); before the update \(before), after it \(pendingValue)")
                continue
            }
            if let sequence = model.lastChange[account] {
                let expected = before.map { "\($0)" } ?? "nothing (deleted)"
                verdict.lost.append("\(account): step \(sequence) left \(expected), found \(found.map { "\($0)" } ?? "nothing")")
                verdict.lostOperations.insert(sequence)
            } else if before != nil {
                verdict.lost.append("\(account): an item from before this run is \(found.map { "changed to \($0)" } ?? "gone")")
                verdict.lostOperations.insert(-1)
            } else {
                verdict.phantom.append("\(account): found \(found.map { "\($0)" } ?? "nothing"), never written")
            }
        }
        if !appliedTo.isEmpty && !notAppliedTo.isEmpty {
            verdict.halfApplied.append("step \(pending!.sequence) (\(pending!.step)) applied to \(appliedTo), not to \(notAppliedTo)")
        } else if !appliedTo.isEmpty {
            verdict.pendingApplied = true
        } else if !notAppliedTo.isEmpty {
            verdict.pendingApplied = false
        }
        return verdict
    }
}
