import Foundation
import KeychainTestSupport
@testable import KeychainFile

/// Copies of one keychain as a merge sees them (item id → entry), edited apart by seeded random operations and
/// merged with ``CopyMerger``: the histories the merge property tests run on.
///
/// Times come from one clock that sometimes stands still, so that versions and tombstones with equal times occur.
/// Names come from a small pool, so that items added apart often collide on their primary key.
struct MergeHistory {
    typealias Copy = [ItemID: MergeEntry]

    var random: SplitMix64
    var clock: Int64 = 1_764_000_000_000
    var copies: [Copy]
    /// Whether every item added or renamed gets an account no other item had: no two items, on any copy, ever share a
    /// primary key. Otherwise accounts come from ``names``.
    let uniqueNames: Bool
    private var namesGiven = 0
    /// The copies' common start. Copies of one file that only merge with each other keep it as the last commit their
    /// logs share: a merge writes its own records, so two copies' logs part where the first of them was edited.
    private(set) var start: Copy = [:]
    /// Whether ``sync(_:from:)`` merges as files that share their start do (SPEC.md §43.9), not as two copies alone.
    var sharesStart = false

    /// A history whose copies all start as one copy of a few items.
    init(seed: UInt64, copies count: Int, startingItems: Int = 4, uniqueNames: Bool = false) {
        random = SplitMix64(seed: seed)
        self.uniqueNames = uniqueNames
        var start: Copy = [:]
        copies = []
        for _ in 0..<startingItems { add(to: &start, time: tick()) }
        copies = Array(repeating: start, count: count)
        self.start = start
    }

    /// An account for an item added or renamed.
    mutating func name() -> String {
        namesGiven += 1
        return uniqueNames ? "u\(namesGiven)" : Self.names[Int(random.next() % UInt64(Self.names.count))]
    }

    /// Advances the clock by 0, 1 or 2 milliseconds and returns it.
    mutating func tick() -> Int64 {
        clock += Int64(random.next() % 3)
        return clock
    }

    /// Applies one random edit to copy `index`: an add, an update, a deletion, or the resolution of a conflict copy.
    mutating func edit(_ index: Int) {
        let time = tick()
        var copy = copies[index]
        let live = copy.compactMap { $0.value.version }.sorted { $0.id.bytesPrecede($1.id) }
        let conflictCopies = live.filter { ConflictCopy.unmarked($0.attributes, id: $0.id) != nil }
        switch random.next() % 10 {
        case 0, 1, 2:
            add(to: &copy, time: time)
        case 3, 4, 5:
            guard !live.isEmpty else { break }
            let version = live[Int(random.next() % UInt64(live.count))]
            var attributes = version.attributes
            if random.next() % 4 == 0 {
                attributes = try! attributes.setting(.account, to: .string(name()))
            }
            attributes = try! attributes.setting(.modificationDate, to: .date(Self.date(time)))
            let updated = MergeVersion(id: version.id, attributes: attributes, secret: Self.secret(&random))
            if Self.isFree(updated, in: copy) { copy[version.id]!.version = updated }
        case 6, 7:
            guard !live.isEmpty else { break }
            copy[live[Int(random.next() % UInt64(live.count))].id] = MergeEntry(tombstone: time)
        default:
            guard !conflictCopies.isEmpty else { break }
            let chosen = conflictCopies[Int(random.next() % UInt64(conflictCopies.count))]
            let (origin, unmarked) = ConflictCopy.unmarked(chosen.attributes, id: chosen.id)!
            if random.next() % 2 == 0 {
                let dated = try! unmarked.setting(.modificationDate, to: .date(Self.date(time)))
                let kept = MergeVersion(id: origin, attributes: dated, secret: chosen.secret)
                var without = copy
                without[chosen.id] = MergeEntry(tombstone: time)
                guard Self.isFree(kept, in: without) else { break }
                copy = without
                // As Keychain.resolveConflict does: the item's version is set aside with a tombstone of its copy's id.
                if let previous = copy[origin]?.version {
                    let dismissed = ConflictCopy.id(origin: origin, digest: previous.digest)
                    if copy[dismissed]?.version == nil { copy[dismissed, default: MergeEntry()].tombstone = time }
                }
                copy[origin, default: MergeEntry()].version = kept
            } else {
                copy[chosen.id] = MergeEntry(tombstone: time)
            }
        }
        copies[index] = copy
    }

    /// Merges copy `other` into copy `index` without a base, as `kcf merge` of two files does.
    mutating func sync(_ index: Int, from other: Int) {
        copies[index] = try! CopyMerger.merge(
            ours: copies[index], theirs: copies[other], base: sharesStart ? start : nil, sharedHistory: sharesStart).result
    }

    static let names = ["ann", "bob", "cy"]

    static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    static func secret(_ random: inout SplitMix64) -> [UInt8] {
        (0..<(1 + Int(random.next() % 3))).map { _ in UInt8(truncatingIfNeeded: random.next() % 4) }
    }

    /// Whether `version`'s primary key is free in `copy` (but for the item itself).
    static func isFree(_ version: MergeVersion, in copy: Copy) -> Bool {
        let key = version.attributes.primaryKey
        return !copy.values.contains { entry in
            guard let other = entry.version, other.id != version.id else { return false }
            return other.attributes.primaryKey == key
        }
    }

    mutating func add(to copy: inout Copy, time: Int64) {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: random.next()) }
        let service = "s\(random.next() % 2)"
        let attributes = try! ItemAttributes(itemClass: .genericPassword, values: [
            .service: .string(service),
            .account: .string(name()),
            .accessGroup: .string(""), .synchronizable: .boolean(false),
            .creationDate: .date(Self.date(time)), .modificationDate: .date(Self.date(time)),
        ])
        let version = MergeVersion(id: try! ItemID(bytes: bytes), attributes: attributes, secret: Self.secret(&random))
        if Self.isFree(version, in: copy) { copy[version.id] = MergeEntry(version: version) }
    }

    /// Whether two copies hold the same entries: the same versions and the same tombstone times.
    static func same(_ left: Copy, _ right: Copy) -> Bool {
        left.count == right.count && left.allSatisfy { id, entry in right[id].map { entry.isSame(as: $0) } ?? false }
    }

    /// Whether two copies hold the same entries for every id both know, and nothing live (only tombstones) for an id
    /// one of them does not know: what two orders of merges agree on (SPEC.md §43.7). A tombstone one order derives
    /// for a conflict copy the other order never made deletes nothing that either holds.
    static func equivalent(_ left: Copy, _ right: Copy) -> Bool {
        for id in Set(left.keys).union(right.keys) {
            switch (left[id], right[id]) {
            case (let l?, let r?):
                if l.isSame(as: r) { continue }
                // A tombstone older than the live version both hold, which one order derived (§43.3) and the other
                // did not need: it deletes nothing either holds.
                guard let version = l.version, r.holdsSameVersion(as: l),
                      (l.tombstone ?? Int64.min) < version.time, (r.tombstone ?? Int64.min) < version.time else { return false }
            case (let only?, nil), (nil, let only?): if only.version != nil { return false }
            case (nil, nil): break
            }
        }
        return true
    }

    /// The versions a copy keeps, each as its item's id and the digest of the version — a conflict copy counted as the
    /// version it keeps of its item: what two orders of merges keep when they agree on every version but not on
    /// which of two items with one primary key keeps it (SPEC.md §43.7).
    static func versionsKept(_ copy: Copy) -> [String: Int] {
        var kept: [String: Int] = [:]
        for entry in copy.values {
            guard let version = entry.version else { continue }
            let (id, digest) = ConflictCopy.original(of: version).map { ($0.origin, $0.version.digest) } ?? (version.id, version.digest)
            kept["\(id) \(digest)", default: 0] += 1
        }
        return kept
    }

    /// What differs between two copies, for a failing test's message.
    static func difference(_ left: Copy, _ right: Copy) -> String {
        var lines: [String] = []
        for id in Set(left.keys).union(right.keys).sorted(by: { $0.bytesPrecede($1) }) {
            let (l, r) = (left[id], right[id])
            if let l, let r, l.isSame(as: r) { continue }
            lines.append("\(id): \(describe(l)) | \(describe(r))")
        }
        return lines.joined(separator: "\n")
    }

    static func describe(_ entry: MergeEntry?) -> String {
        guard let entry else { return "absent" }
        var parts: [String] = []
        if let version = entry.version {
            let account = version.attributes[.account].map { "\($0)" } ?? "-"
            parts.append("live t=\(version.time) \(account) \(version.digest.prefix(3).map { String($0) })")
        }
        if let time = entry.tombstone { parts.append("tombstone \(time)") }
        return parts.isEmpty ? "empty" : parts.joined(separator: " + ")
    }
}
