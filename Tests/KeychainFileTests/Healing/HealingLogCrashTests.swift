import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

/// Crashes that persist an append's writes out of order (Docs/FormatVersion2.md §3): the page cache writes pages
/// back in any order, so a power loss can leave any subset of an append's pages — its record, the parity of a
/// chunk it completes, its commit slot — and the file's new size on disk, one of them torn. A sync is a barrier:
/// what was written before it is on disk once it returned.
///
/// After each such crash the file must open, and rules 1–4 hold: every acknowledged byte reads back (after
/// repair), the new record is either whole or reported (codewords left unrepaired, for the caller to set
/// aside), nothing is silently wrong, and the next writer can go on.
@Suite("Healing: crashes with an append's writes persisted out of order")
struct HealingLogCrashTests {
    typealias Files = HealingLogTests
    static let key = HealingLogTests.key
    static let chain = HealingLogCuttingTests.chain
    static let page = 4_096

    /// What can reach the disk on its own: one 4 KiB page of one write, or the file's new size.
    enum Unit {
        case page(offset: Int, bytes: [UInt8])
        case size(Int)
    }

    /// How a unit reached the disk.
    enum Landing: Equatable {
        case lost
        case whole
        /// Its first sectors only (a page torn at a sector boundary).
        case torn
        /// Neither the old bytes nor the new: the whole page garbled (a torn sector of a 4 KiB-sector drive).
        case garbled
    }

    /// The units of an append's events, grouped by the syncs between them.
    static func epochs(of events: [Files.RecordingHandle.Event], baseSize: Int) -> [[Unit]] {
        var epochs: [[Unit]] = [[]]
        var size = baseSize
        var sizeAtSync = baseSize
        for event in events {
            switch event {
            case .write(let offset, let bytes):
                var start = offset
                while start < offset + bytes.count {
                    let end = min(offset + bytes.count, (start / page + 1) * page)
                    epochs[epochs.count - 1].append(.page(offset: start, bytes: Array(bytes[(start - offset)..<(end - offset)])))
                    start = end
                }
                size = max(size, offset + bytes.count)
            case .sync:
                if size != sizeAtSync { epochs[epochs.count - 1].append(.size(size)) }
                sizeAtSync = size
                epochs.append([])
            case .truncate:
                Issue.record("an append to a file without a remnant truncates nothing")
            }
        }
        if size != sizeAtSync { epochs[epochs.count - 1].append(.size(size)) }
        return epochs.filter { !$0.isEmpty }
    }

    /// The file a crash leaves: `base`, then the units of earlier epochs, then `units` as `landings` say.
    static func image(base: [UInt8], landed: [Unit], units: [Unit], landings: [Landing], random: inout TestRandom) -> [UInt8] {
        var image = base
        var size = base.count
        for (unit, landing) in zip(landed + units, [Landing](repeating: .whole, count: landed.count) + landings) {
            switch (unit, landing) {
            case (_, .lost):
                continue
            case (.size(let newSize), _):
                size = newSize
            case (.page(let offset, let bytes), .whole):
                Files.apply((offset, bytes), to: &image)
            case (.page(let offset, let bytes), .torn):
                Files.apply((offset, Array(bytes.prefix(max(512, bytes.count / 2 / 512 * 512)))), to: &image)
            case (.page(let offset, _), .garbled):
                let pageStart = offset / page * page
                Files.apply((pageStart, (0..<page).map { _ in UInt8.random(in: 0...255, using: &random) }), to: &image)
            }
        }
        // Bytes past the size that reached the disk are not in the file; below it, bytes no write reached are zeros.
        if image.count > size { image.removeSubrange(size...) }
        if image.count < size { image += [UInt8](repeating: 0, count: size - image.count) }
        return image
    }

    /// The landings to try for `count` units: every subset whole or lost (or, past ten units, every subset
    /// with at most one lost or one whole and 200 more at random), then each page torn and garbled beside none,
    /// all, and two random subsets of the others.
    static func landings(for units: [Unit], random: inout TestRandom) -> [[Landing]] {
        let count = units.count
        var cases: [[Landing]] = []
        func subset(_ bits: UInt64) -> [Landing] { (0..<count).map { bits >> UInt64($0) & 1 == 1 ? .whole : .lost } }
        if count <= 10 {
            cases = (0..<(UInt64(1) << UInt64(count))).map(subset)
        } else {
            let all = (UInt64(1) << UInt64(count)) - 1
            cases = [subset(0), subset(all)]
            for index in 0..<count {
                cases.append(subset(UInt64(1) << UInt64(index)))
                cases.append(subset(all ^ (UInt64(1) << UInt64(index))))
            }
            for _ in 0..<200 { cases.append(subset(UInt64.random(in: 0...all, using: &random))) }
        }
        for (index, unit) in units.enumerated() {
            guard case .page = unit else { continue }
            for fault in [Landing.torn, .garbled] {
                var others = [subset(0), subset((UInt64(1) << UInt64(count)) - 1)]
                others += (0..<2).map { _ in subset(UInt64.random(in: 0...((UInt64(1) << UInt64(count)) - 1), using: &random)) }
                for var landing in others {
                    landing[index] = fault
                    cases.append(landing)
                }
            }
        }
        return cases
    }

    /// Appends `record` to a log holding `acknowledged`, crashes it every way ``landings(for:random:)`` lists,
    /// and checks each file left. Returns how many crashes were checked, and in how many a repair proposed wrong
    /// bytes that the records' tags would refuse.
    static func crashEveryWay(acknowledged sizes: [Int], record size: Int, flushBetween: Bool, seed: UInt64) throws -> (cases: Int, refused: Int) {
        let records = Files.records(sizes + [size, 1_000], seed: seed)
        let (handle, acknowledged) = try Files.file(with: Array(records[0..<sizes.count]))
        let (record, next) = (records[sizes.count], records[sizes.count + 1])
        let base = try Files.bytes(of: handle)
        let recording = Files.RecordingHandle(Files.handle(base))
        let writer = try HealingLog(opening: recording, headerKey: key, epoch: 1)
        try writer.append(record, committedEnd: acknowledged.count + record.count, headSequence: UInt64(sizes.count + 1),
                          headChain: chain(sizes.count + 1), flushBetween: flushBetween)
        let epochs = Self.epochs(of: recording.events, baseSize: base.count)
        let slot = HealingLayout.slotOffsets[(sizes.count + 1) % 2]
        var random = TestRandom(seed: seed)
        var (cases, refused) = (0, 0)
        for (crashed, units) in epochs.enumerated() {
            let landed = Array(epochs[..<crashed].joined())
            for landing in Self.landings(for: units, random: &random) {
                let image = Self.image(base: base, landed: landed, units: units, landings: landing, random: &random)
                let name = "crash in epoch \(crashed) of \(epochs.count), units \(landing.map { "\($0)".prefix(1) }.joined())"
                // A slot write that landed in part (some pages whole, others lost, torn or garbled).
                let slotLandings = zip(units, landing).compactMap { unit, landing -> Landing? in
                    guard case .page(let offset, _) = unit, (slot..<(slot + CommitSlot.length)).contains(offset) else { return nil }
                    return landing
                }
                let slotInPart = Set(slotLandings).count > 1 || slotLandings.contains { $0 == .torn || $0 == .garbled }
                refused += try check(
                    image, acknowledged: acknowledged, record: record, next: next, counter: UInt64(sizes.count), slotInPart: slotInPart, name)
                cases += 1
            }
        }
        return (cases, refused)
    }

    /// Rules 1–4 for a file a crash left while `record` was appended after `acknowledged` (commit `counter`);
    /// the test's records stand in for the tags that confirm records and repairs. Returns 1 if a repair proposed
    /// wrong bytes as repaired — allowed only when the slot write landed in part, so that its parity may hold
    /// pages of the write it replaced, which no seal shows — and 0 otherwise.
    static func check(
        _ image: [UInt8], acknowledged: [UInt8], record: [UInt8], next: [UInt8], counter: UInt64, slotInPart: Bool, _ name: String
    ) throws -> Int {
        let handle = Files.handle(image)
        let log: HealingLog
        do {
            log = try HealingLog(opening: handle, headerKey: key, epoch: 1)
        } catch {
            Issue.record("\(name): the file does not open: \(error)")
            return 0
        }
        let committed = log.committed?.counter == counter + 1
        #expect(committed || log.committed?.counter == counter, "\(name)")
        let expected = committed ? acknowledged + record : acknowledged
        guard log.writtenEnd == expected.count else {
            Issue.record("\(name): the log ends at \(log.writtenEnd), not \(expected.count)")
            return 0
        }
        let tailStart = expected.count - expected.count % ChunkParity.dataLength
        if log.appendRefusal == nil {
            // Appends go on from the last chunk as it reads: it must be exactly what was committed.
            let tail = try log.read(at: tailStart, count: expected.count - tailStart) == Array(expected[tailStart...])
            #expect(tail, "\(name): appends allowed over a last chunk that is not the committed one")
        }
        // Repairs: proposals are never silently wrong (outside the one case above), and the confirmed ones are
        // written back.
        var refused = 0
        for chunk in 0..<((expected.count + ChunkParity.dataLength - 1) / ChunkParity.dataLength) {
            let start = chunk * ChunkParity.dataLength
            let repair = try log.repair(chunk: chunk)
            let unrepaired = Set(repair.unrepairedCodewords)
            let wrong = repair.data.indices.filter { repair.data[$0] != expected[start + $0] }
            if let claimed = wrong.first(where: { !unrepaired.contains($0 % ChunkParity.depth) }) {
                guard slotInPart else {
                    Issue.record("\(name): byte \(start + claimed) is proposed wrong, and its codeword is said repaired")
                    return 0
                }
                refused = 1
            }
            if repair.changedOffsets.allSatisfy({ repair.data[$0] == expected[start + $0] }) { try log.writeBack(repair) }
        }
        // The next writer, as a replay: acknowledged records verify (rule 1); the new record either verifies or
        // is set aside (rule 2); a last chunk whose records all verify is confirmed as it reads (its slot's
        // parity was torn); a remnant is cut (rule 3); and the log takes the next record.
        let kept = (try? log.read(at: 0, count: acknowledged.count)) == acknowledged
        guard kept else {
            Issue.record("\(name): acknowledged records do not read back, even after repair")
            return 0
        }
        let recordVerifies = (try? log.read(at: acknowledged.count, count: expected.count - acknowledged.count)) == Array(expected[acknowledged.count...])
        if !recordVerifies { try log.setAside(acknowledged.count..<expected.count) }
        if log.appendRefusal == .tailMismatch, try log.read(at: tailStart, count: expected.count - tailStart) == Array(expected[tailStart...]) {
            try log.confirmLastChunk()
        }
        guard log.appendRefusal == nil else {
            Issue.record("\(name): the next writer cannot append: \(log.appendRefusal!)")
            return 0
        }
        try log.append(next, committedEnd: expected.count + next.count, headSequence: counter + 2, headChain: chain(Int(counter) + 2))
        let after = try Files.bytes(of: handle)
        #expect(after.count == HealingLayout.physicalEnd(ofLog: expected.count + next.count), "\(name): a remnant was left")
        let reopened = try HealingLog(opening: Files.handle(after), headerKey: key, epoch: 1)
        let still = try reopened.read(at: 0, count: acknowledged.count) == acknowledged
        let appended = try reopened.read(at: expected.count, count: next.count) == next
        let whole = try !committed || !recordVerifies || reopened.read(at: acknowledged.count, count: record.count) == record
        #expect(still && appended && whole, "\(name): after the next append")
        return refused
    }

    @Test("A record within the last chunk, one sync: any subset of its pages, its slot's pages and the new size on disk")
    func recordInChunk() throws {
        let (cases, refused) = try Self.crashEveryWay(acknowledged: [350, 20_000], record: 5_000, flushBetween: false, seed: 61)
        print("healing crashes: \(cases) out-of-order crashes of a 5,000-byte append, \(refused) wrong proposals refused by the tags")
    }

    @Test("A record within the last chunk, a sync before its slot: the record is on disk whenever the slot is")
    func recordInChunkFlushed() throws {
        let (cases, refused) = try Self.crashEveryWay(acknowledged: [350, 20_000], record: 5_000, flushBetween: true, seed: 62)
        print("healing crashes: \(cases) out-of-order crashes of a flushed 5,000-byte append, \(refused) wrong proposals refused by the tags")
    }

    @Test("A record that completes a chunk, one sync: its pieces, the completed chunk's parity and its slot land in any order")
    func recordCompletingChunk() throws {
        let (cases, refused) = try Self.crashEveryWay(acknowledged: [350, 49_650], record: 10_000, flushBetween: false, seed: 63)
        print("healing crashes: \(cases) out-of-order crashes of an append completing a chunk, \(refused) wrong proposals refused by the tags")
    }

    @Test("A record that completes a chunk, a sync before its slot")
    func recordCompletingChunkFlushed() throws {
        let (cases, refused) = try Self.crashEveryWay(acknowledged: [350, 49_650], record: 10_000, flushBetween: true, seed: 64)
        print("healing crashes: \(cases) out-of-order crashes of a flushed append completing a chunk, \(refused) wrong proposals refused by the tags")
    }

    @Test("A record over 64 KiB completing two chunks, flushed before its slot as every large record is")
    func largeRecord() throws {
        let (cases, refused) = try Self.crashEveryWay(acknowledged: [350, 49_650], record: 70_000, flushBetween: false, seed: 65)
        print("healing crashes: \(cases) out-of-order crashes of a 70,000-byte append, \(refused) wrong proposals refused by the tags")
    }
}
