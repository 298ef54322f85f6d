import Testing

/// The crash trials' transcript parser and checker (CrashTranscript.swift, CrashModel.swift) on hand-written
/// worker output and observations: each kind of damage is found, and the allowed outcomes are accepted.
@Suite("Crash trial checker")
struct CrashCheckerTests {
    static let lines = [
        "open 1 manual 1 240",
        "begin 1 op add/a-1/x:5/l1/c1",
        "ack 1 1 400",
        "begin 2 batch add/a-2/y:3/l2/c2 update/a-1/z:4/l3/c3",
        "ack 2 1 700",
        "begin 3 op delete/a-2",
        "ack 3 1 800",
        "begin 4 batch add/a-3/w:2/l4/c4 update/a-1/v:6/l5/c5 add/a-4/u:1/l6/c6",
    ]

    private func model(_ lines: [String] = lines, formatVersion: Int = 2) throws -> (CrashModel, CrashTranscript) {
        let transcript = try CrashTranscript(lines: lines)
        var model = CrashModel()
        model.formatVersion = formatVersion
        for step in transcript.acknowledged { model = try model.applying(step.step, sequence: step.sequence) }
        return (model, transcript)
    }

    private func item(_ text: String, _ length: Int, _ label: String, _ comment: String) -> CrashItem {
        CrashItem(secret: CrashTranscript.expandSecret(text, length: length), label: label, comment: comment)
    }

    private func observation(_ items: [String: CrashItem], opensWith: [Int] = [1], epoch: UInt64 = 1) -> CrashObservation {
        CrashObservation(opensWith: opensWith, items: items, itemCount: items.count, epoch: epoch)
    }

    @Test("The transcript: acknowledged steps in order, the last begin in flight, secrets expanded")
    func parsing() throws {
        let (model, transcript) = try model()
        #expect(transcript.opening == .init(password: 1, automaticCompaction: false, epoch: 1, end: 240))
        #expect(transcript.acknowledged.map(\.sequence) == [1, 2, 3])
        #expect(transcript.acknowledged.map(\.end) == [400, 700, 800])
        #expect(transcript.pending?.sequence == 4)
        #expect(transcript.pending?.step.kind == "batch")
        #expect(model.items == ["a-1": item("z", 4, "l3", "c3")])
        #expect(CrashTranscript.expandSecret("ab", length: 7) == Array("ab|ab|a".utf8))
        #expect(model.lastChange == ["a-1": 2, "a-2": 3])
    }

    @Test("Malformed output is refused: an ack of another step, a begin while one is in flight, junk")
    func malformed() {
        #expect(throws: CrashTranscript.ParseError.self) { try CrashTranscript(lines: ["open 1 manual 1 240", "begin 1 compact", "ack 2 2 240"]) }
        #expect(throws: CrashTranscript.ParseError.self) { try CrashTranscript(lines: ["open 1 manual 1 240", "begin 1 compact", "begin 2 compact"]) }
        #expect(throws: CrashTranscript.ParseError.self) { try CrashTranscript(lines: ["begin 1 compact"]) }
        #expect(throws: CrashTranscript.ParseError.self) { try CrashTranscript(lines: ["open 1 manual 1 240", "begin 1 op frobnicate/a"]) }
        #expect(throws: CrashTranscript.ParseError.self) { try CrashTranscript(lines: ["open 1 manual 1 240", "done 3"]) }
    }

    @Test("The batch in flight applied wholly or not at all is clean; partly is half-applied")
    func batchInFlight() throws {
        let (model, transcript) = try model()
        let before = model.items
        let after: [String: CrashItem] = [
            "a-1": item("v", 6, "l5", "c5"), "a-3": item("w", 2, "l4", "c4"), "a-4": item("u", 1, "l6", "c6"),
        ]
        let none = CrashChecker.check(acknowledged: model, pending: transcript.pending, observed: observation(before))
        #expect(none.isClean && none.pendingApplied == false)
        let all = CrashChecker.check(acknowledged: model, pending: transcript.pending, observed: observation(after))
        #expect(all.isClean && all.pendingApplied == true)

        var partly = after
        partly["a-4"] = nil
        let half = CrashChecker.check(acknowledged: model, pending: transcript.pending, observed: observation(partly))
        #expect(!half.isClean && half.halfApplied.count == 1 && half.lost.isEmpty)

        // Torn off after the kill: only "not applied" is allowed.
        let torn = CrashChecker.check(acknowledged: model, pending: transcript.pending, observed: observation(after), pendingMayApply: false)
        #expect(!torn.isClean)
    }

    @Test("An update whose secret changed but not its label is half-applied")
    func halfUpdate() throws {
        let (model, transcript) = try model(Array(Self.lines.prefix(7)) + ["begin 4 op update/a-1/q:9/l9/c9"])
        var mixed = model.items
        mixed["a-1"] = CrashItem(secret: CrashTranscript.expandSecret("q", length: 9), label: "l3", comment: "c3")
        let verdict = CrashChecker.check(acknowledged: model, pending: transcript.pending, observed: observation(mixed))
        #expect(verdict.halfApplied.count == 1)
        #expect(verdict.lostOperations.isEmpty)
    }

    @Test("A missing acknowledged update, a deleted item back, and an item nobody wrote are found")
    func lostAndPhantom() throws {
        let (model, _) = try model(Array(Self.lines.prefix(7)))
        let stale = CrashChecker.check(acknowledged: model, pending: nil, observed: observation(["a-1": item("x", 5, "l1", "c1")]))
        #expect(stale.lostOperations == [2])
        let resurrected = CrashChecker.check(
            acknowledged: model, pending: nil, observed: observation(["a-1": item("z", 4, "l3", "c3"), "a-2": item("y", 3, "l2", "c2")]))
        #expect(resurrected.lostOperations == [3])
        let phantom = CrashChecker.check(
            acknowledged: model, pending: nil, observed: observation(["a-1": item("z", 4, "l3", "c3"), "b-1": item("y", 3, "l2", "c2")]))
        #expect(phantom.phantom.count == 1 && phantom.lostOperations.isEmpty)
        var counted = observation(["a-1": item("z", 4, "l3", "c3")])
        counted.itemCount = 2
        #expect(CrashChecker.check(acknowledged: model, pending: nil, observed: counted).phantom.count == 1)
        #expect(CrashChecker.check(acknowledged: model, pending: nil, observed: observation(model.items)).isClean)
    }

    @Test("Passwords and epochs: exactly the acknowledged password, either while a change is in flight; no epoch lost")
    func credentialsAndEpochs() throws {
        let lines = ["open 1 manual 1 240", "begin 1 credential 2 rotate", "ack 1 2 240", "begin 2 compact", "ack 2 3 240"]
        let (model, _) = try model(lines)
        #expect(model.password == 2 && model.epoch == 3)
        #expect(CrashChecker.check(acknowledged: model, pending: nil, observed: observation([:], opensWith: [2], epoch: 3)).isClean)
        #expect(CrashChecker.check(acknowledged: model, pending: nil, observed: observation([:], opensWith: [1], epoch: 3)).lostOperations == [1])
        #expect(!CrashChecker.check(acknowledged: model, pending: nil, observed: observation([:], opensWith: [1, 2], epoch: 3)).isClean)
        #expect(!CrashChecker.check(acknowledged: model, pending: nil, observed: observation([:], opensWith: [], epoch: 3)).isClean)
        #expect(CrashChecker.check(acknowledged: model, pending: nil, observed: observation([:], opensWith: [2], epoch: 2)).lostOperations == [2])
        #expect(!CrashChecker.check(acknowledged: model, pending: nil, observed: observation([:], opensWith: [2], epoch: 4)).isClean)

        let changing = (sequence: 3, step: CrashStep.credential(password: 1, rotate: false))
        let old = CrashChecker.check(acknowledged: model, pending: changing, observed: observation([:], opensWith: [2], epoch: 3))
        #expect(old.isClean)
        let new = CrashChecker.check(acknowledged: model, pending: changing, observed: observation([:], opensWith: [1], epoch: 4))
        #expect(new.isClean && new.pendingApplied == true)
        // The old password in the new epoch: the rewrite kept the old slots.
        #expect(!CrashChecker.check(acknowledged: model, pending: changing, observed: observation([:], opensWith: [2], epoch: 4)).isClean)
        // The new password with the old epoch: the slots changed without a rewrite.
        #expect(!CrashChecker.check(acknowledged: model, pending: changing, observed: observation([:], opensWith: [1], epoch: 3)).isClean)
    }

    @Test("On a version 1 file a rewrite writes version 2, a credential change included, in one epoch: never the upgrade without the change")
    func upgradeOnRewrite() throws {
        let lines = ["open 1 manual 1 240", "begin 1 compact", "ack 1 2 240"]
        let (compacted, _) = try model(lines, formatVersion: 1)
        #expect(compacted.formatVersion == 2 && compacted.epoch == 2)
        let (model, _) = try model(Array(lines.prefix(1)), formatVersion: 1)
        let changing = (sequence: 1, step: CrashStep.credential(password: 2, rotate: false))
        let changed = try model.applying(changing.step, sequence: 1)
        #expect(changed.epoch == 2 && changed.formatVersion == 2)
        func observed(_ password: Int, epoch: UInt64, version: Int) -> CrashObservation {
            var observation = observation([:], opensWith: [password], epoch: epoch)
            observation.formatVersion = version
            return observation
        }
        // Not applied; applied.
        #expect(CrashChecker.check(acknowledged: model, pending: changing, observed: observed(1, epoch: 1, version: 1)).isClean)
        let applied = CrashChecker.check(acknowledged: model, pending: changing, observed: observed(2, epoch: 2, version: 2))
        #expect(applied.isClean && applied.pendingApplied == true)
        // The upgrade without the change, a second epoch, version 2 without a rewrite in flight.
        #expect(!CrashChecker.check(acknowledged: model, pending: changing, observed: observed(1, epoch: 2, version: 2)).isClean)
        #expect(!CrashChecker.check(acknowledged: model, pending: changing, observed: observed(2, epoch: 3, version: 2)).isClean)
        #expect(!CrashChecker.check(acknowledged: model, pending: nil, observed: observed(1, epoch: 1, version: 2)).isClean)
    }

    @Test("A file that opens in another format version than the trial created is a failure")
    func formatVersionKept() throws {
        var (model, _) = try model(Array(Self.lines.prefix(7)))
        model.formatVersion = 2
        var observed = observation(model.items)
        observed.formatVersion = 2
        #expect(CrashChecker.check(acknowledged: model, pending: nil, observed: observed).isClean)
        observed.formatVersion = 1
        #expect(CrashChecker.check(acknowledged: model, pending: nil, observed: observed).other.count == 1)
    }
}
