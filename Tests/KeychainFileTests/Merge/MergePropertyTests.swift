import Testing
@testable import KeychainFile

/// The merge's promises (SPEC.md §43.7), checked on thousands of seeded random histories of two and three copies
/// edited apart and merged with each other along the way: commutative, associative, idempotent, and no edit lost.
@Suite("Merging copies: properties over random histories")
struct MergePropertyTests {
    typealias Copy = MergeHistory.Copy

    static let seeds: ClosedRange<UInt64> = 1...3_000

    private func merge(_ ours: Copy, _ theirs: Copy, base: Copy? = nil) -> Copy {
        try! CopyMerger.merge(ours: ours, theirs: theirs, base: base).result
    }

    /// Three copies from one start, each edited apart, with merges between random pairs along the way.
    private func history(seed: UInt64, uniqueNames: Bool = false, steps: Int = 24, syncs: Bool = true, sharesStart: Bool = false) -> MergeHistory {
        var history = MergeHistory(seed: seed, copies: 3, uniqueNames: uniqueNames)
        history.sharesStart = sharesStart
        for _ in 0..<steps {
            let index = Int(history.random.next() % 3)
            if syncs, history.random.next() % 5 == 0 {
                history.sync(index, from: (index + 1 + Int(history.random.next() % 2)) % 3)
            } else {
                history.edit(index)
            }
        }
        return history
    }

    @Test("Merging A with B gives what merging B with A gives")
    func commutative() {
        var failures: [String] = []
        for seed in Self.seeds {
            let copies = history(seed: seed, uniqueNames: seed % 2 == 0).copies
            let (ab, ba) = (merge(copies[0], copies[1]), merge(copies[1], copies[0]))
            if !MergeHistory.same(ab, ba) { failures.append("seed \(seed):\n\(MergeHistory.difference(ab, ba))") }
        }
        #expect(failures.isEmpty, "\(failures.count) histories: \(failures.prefix(3).joined(separator: "\n"))")
    }

    @Test("Merging a copy with itself, or with a copy merged in already, changes nothing")
    func idempotent() {
        var failures: [String] = []
        for seed in Self.seeds {
            let copies = history(seed: seed, uniqueNames: seed % 2 == 0).copies
            let (a, b) = (copies[0], copies[1])
            let ab = merge(a, b)
            for (name, merged, expected) in [("A+A", merge(a, a), a), ("(A+B)+B", merge(ab, b), ab), ("(A+B)+A", merge(ab, a), ab)]
            where !MergeHistory.same(merged, expected) {
                failures.append("seed \(seed) \(name):\n\(MergeHistory.difference(merged, expected))")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) histories: \(failures.prefix(3).joined(separator: "\n"))")
    }

    @Test("Merging (A with B) with C gives what merging A with (B with C) gives, when no two items share a primary key")
    func associative() {
        var failures: [String] = []
        for seed in Self.seeds {
            let copies = history(seed: seed, uniqueNames: true).copies
            let left = merge(merge(copies[0], copies[1]), copies[2])
            let right = merge(copies[0], merge(copies[1], copies[2]))
            if !MergeHistory.equivalent(left, right) { failures.append("seed \(seed):\n\(MergeHistory.difference(left, right))") }
        }
        #expect(failures.isEmpty, "\(failures.count) histories: \(failures.prefix(3).joined(separator: "\n"))")
    }

    @Test("With primary-key collisions, (A with B) with C and A with (B with C) each lose nothing of A, B or C")
    func associativeWithCollisions() {
        var failures: [String] = []
        var collided = 0
        var differ = 0
        for seed in Self.seeds {
            let copies = history(seed: seed).copies
            let first = try! CopyMerger.merge(ours: copies[0], theirs: copies[1], base: nil)
            if first.conflicts.contains(where: { $0.kind == .primaryKeyTaken }) { collided += 1 }
            let left = merge(first.result, copies[2])
            let right = merge(copies[0], merge(copies[1], copies[2]))
            if !MergeHistory.equivalent(left, right) { differ += 1 }
            for (name, result) in [("(A+B)+C", left), ("A+(B+C)", right)] {
                for (index, input) in copies.enumerated() {
                    failures += Self.lost(from: input, other: [:], in: result, base: nil).map { "seed \(seed) \(name), copy \(index): \($0)" }
                }
            }
        }
        print("MergePropertyTests: \(collided) of \(Self.seeds.count) histories collided on a primary key in A+B; the two orders differ in \(differ)")
        #expect(collided > Self.seeds.count / 10, "only \(collided) histories collided")
        #expect(failures.isEmpty, "\(failures.count) histories: \(failures.prefix(3).joined(separator: "\n"))")
    }

    @Test("No version or deletion on either side is lost: each is in the result, a conflict copy, or followed by a later change")
    func nothingLost() {
        var failures: [String] = []
        for seed in Self.seeds {
            let copies = history(seed: seed, uniqueNames: seed % 2 == 0).copies
            for (ours, theirs) in [(copies[0], copies[1]), (copies[1], copies[2]), (copies[2], copies[0])] {
                let merged = merge(ours, theirs)
                failures += Self.lost(from: ours, other: theirs, in: merged, base: nil).map { "seed \(seed): \($0)" }
                failures += Self.lost(from: theirs, other: ours, in: merged, base: nil).map { "seed \(seed): \($0)" }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) losses: \(failures.prefix(5).joined(separator: "\n"))")
    }

    @Test("With the shared state of copies' logs (§43.9): commutative, idempotent, associative without collisions, nothing lost, a change on one side only taken as it is")
    func sharedState() {
        var failures: [String] = []
        for seed in Self.seeds {
            let history = history(seed: seed, uniqueNames: seed % 2 == 0, sharesStart: true)
            let start = history.start
            func merge(_ ours: Copy, _ theirs: Copy) -> CopyMerger.Outcome {
                try! CopyMerger.merge(ours: ours, theirs: theirs, base: start, sharedHistory: true)
            }
            let (a, b, c) = (history.copies[0], history.copies[1], history.copies[2])
            let ab = merge(a, b).result
            if !MergeHistory.same(ab, merge(b, a).result) { failures.append("seed \(seed): not commutative:\n\(MergeHistory.difference(ab, merge(b, a).result))") }
            // A copy and itself share all of it: the shared state is the copy.
            if !MergeHistory.same(try! CopyMerger.merge(ours: a, theirs: a, base: a, sharedHistory: true).result, a) { failures.append("seed \(seed): A+A changed A") }
            for (name, again) in [("(A+B)+B", merge(ab, b).result), ("(A+B)+A", merge(ab, a).result)] where !MergeHistory.same(again, ab) {
                failures.append("seed \(seed): \(name) changed A+B:\n\(MergeHistory.difference(again, ab))")
            }
            if seed % 2 == 0 {
                let left = merge(ab, c).result, right = merge(a, merge(b, c).result).result
                if !MergeHistory.equivalent(left, right) { failures.append("seed \(seed): not associative:\n\(MergeHistory.difference(left, right))") }
            }
            // The start unchanged on one side: the other side is taken exactly, with no conflict.
            let taken = merge(start, a)
            if !MergeHistory.same(taken.result, a) || !taken.conflicts.isEmpty {
                failures.append("seed \(seed): start+A is not A:\n\(MergeHistory.difference(taken.result, a))")
            }
            failures += Self.lost(from: a, other: b, in: ab, base: start, changesBeatDeletions: false).map { "seed \(seed): \($0)" }
            failures += Self.lost(from: b, other: a, in: ab, base: start, changesBeatDeletions: false).map { "seed \(seed): \($0)" }
        }
        #expect(failures.isEmpty, "\(failures.count) failures: \(failures.prefix(5).joined(separator: "\n"))")
    }

    @Test("With a base: properties hold, a change on one side only is taken as it is, and no change is lost")
    func threeWay() {
        var failures: [String] = []
        for seed in Self.seeds {
            let start = MergeHistory(seed: seed, copies: 1, startingItems: 6, uniqueNames: seed % 2 == 0)
            let base = start.copies[0]
            var history = start
            history.copies = [base, base, base]
            for _ in 0..<18 { history.edit(Int(history.random.next() % 3)) }
            let (a, b, c) = (history.copies[0], history.copies[1], history.copies[2])
            let ab = merge(a, b, base: base)
            if !MergeHistory.same(ab, merge(b, a, base: base)) { failures.append("seed \(seed): not commutative") }
            if !MergeHistory.same(merge(a, a, base: base), a) { failures.append("seed \(seed): A+A changed A") }
            // A+B descends from B: B is the base of merging B into it again, as git would take it.
            let again = merge(ab, b, base: b)
            if !MergeHistory.same(again, ab) {
                failures.append("seed \(seed): (A+B)+B changed A+B:\n\(MergeHistory.difference(again, ab))")
            }
            let left = merge(ab, c, base: base)
            let right = merge(a, merge(b, c, base: base), base: base)
            let agree = seed % 2 == 0
                ? MergeHistory.equivalent(left, right) : MergeHistory.versionsKept(left) == MergeHistory.versionsKept(right)
            if !agree {
                failures.append("seed \(seed): not associative:\n\(MergeHistory.difference(left, right))")
            }
            // One side unchanged from the base: the other is taken exactly, without a conflict.
            let outcome = try! CopyMerger.merge(ours: base, theirs: a, base: base)
            if !MergeHistory.same(outcome.result, a) || !outcome.conflicts.isEmpty {
                failures.append("seed \(seed): base+A is not A:\n\(MergeHistory.difference(outcome.result, a))")
            }
            failures += Self.lost(from: a, other: b, in: ab, base: base).map { "seed \(seed): \($0)" }
            failures += Self.lost(from: b, other: a, in: ab, base: base).map { "seed \(seed): \($0)" }
        }
        #expect(failures.isEmpty, "\(failures.count) failures: \(failures.prefix(5).joined(separator: "\n"))")
    }

    /// The versions and deletions of `side` that `merged` lost: those changed from `base` (all of them without one)
    /// that are neither in `merged`, nor kept as a conflict copy, nor followed there by a later deletion (of the item
    /// or of its conflict copy) or, for a deletion, by a later version.
    /// - Parameter changesBeatDeletions: whether a change is kept over a deletion whatever their times (a base given,
    ///   §43.6); by default when there is a base. A shared state (§43.9) orders them by time, as no base does.
    static func lost(from side: Copy, other: Copy, in merged: Copy, base: Copy?, changesBeatDeletions: Bool? = nil) -> [String] {
        let changesBeatDeletions = changesBeatDeletions ?? (base != nil)
        var lost: [String] = []
        for (id, entry) in side {
            if let base, let before = base[id], before.isSame(as: entry) { continue }
            let now = merged[id] ?? MergeEntry()
            if let version = entry.version {
                if let kept = now.version, kept.digest == version.digest {
                } else if now.version != nil, ConflictCopy.original(of: version) != nil {
                    // An untouched conflict copy, changed since: the change follows it.
                } else if let time = now.tombstone, time > version.time {
                    // Followed by a later deletion.
                } else {
                    let copyID = ConflictCopy.id(origin: id, digest: version.digest)
                    let copy = merged[copyID]
                    if let copy = copy?.version, ConflictCopy.original(of: copy)?.version.digest == version.digest {
                    } else if copy?.tombstone != nil {
                        // The copy was made and resolved (dismissed) since.
                    } else if let copy = copy?.version, copy.time > version.time {
                        // The copy was made and changed since.
                    } else {
                        lost.append(
                            "version of \(id) at \(version.time) lost: now \(MergeHistory.describe(merged[id])); other side "
                                + "\(MergeHistory.describe(other[id])), copy \(MergeHistory.describe(copy)) / other side's "
                                + "\(MergeHistory.describe(other[copyID])), base \(MergeHistory.describe(base?[id]))")
                    }
                }
            }
            if let time = entry.tombstone, entry.version == nil {
                if let kept = now.tombstone, kept >= time {
                } else if let version = now.version, version.time >= time || changesBeatDeletions {
                } else {
                    lost.append(
                        "deletion of \(id) at \(time) lost: now \(MergeHistory.describe(merged[id])); other side "
                            + "\(MergeHistory.describe(other[id])), base \(MergeHistory.describe(base?[id]))")
                }
            }
        }
        return lost
    }
}
