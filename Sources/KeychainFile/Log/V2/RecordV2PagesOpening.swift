import Dispatch
@_spi(KeychainFileInternals) import KeychainCrypto

/// The pages of one version 2 record being opened (``RecordV2PagesDecoder``): cut into shares that worker threads
/// claim one at a time (``openShares()``), while the calling thread, in ``finish()``, takes the shares' outcomes in
/// page order — making each put's block as soon as its share is done, and opening unclaimed shares itself when
/// the next in order is not done yet.
///
/// `@unchecked Sendable`: the record, bytes, keys and bounds never change; each page's part of the arena is written
/// by the thread opening that page, and a view of it is made only after; each share's outcome slot is written by the
/// thread that opened the share before it marks the share done, and read by the calling thread only once it is
/// marked, under `condition`'s lock; `nextShare` and `done` are only touched under that lock.
final class RecordV2PagesOpening: @unchecked Sendable {
    /// An entry a share opened; a put's attributes view the record's arena.
    enum Opened: Sendable {
        case put(id: ItemID, attributes: ItemAttributes, secretBox: Range<Int>, digests: ItemDigests)
        case delete(id: ItemID, time: Int64)
        case tombstone(id: ItemID, time: Int64)
    }

    /// What one share gave: the entries of its pages up to the first that failed, and that failure.
    struct ShareOutcome: Sendable {
        var entries: [Opened] = []
        var failure: KeychainError? = nil
    }

    let record: RecordV2Decoder.Scanned
    let bytes: [UInt8]
    private let previousChain: [UInt8]
    private let keys: RecordKeysV2
    /// Share `k` is pages `bounds[k] ..< bounds[k + 1]`.
    private let bounds: [Int]
    /// Where each page's plaintext goes in `arena`.
    private let plaintextOffsets: [Int]
    private let arena: ItemBytes
    private let slots: UnsafeMutableBufferPointer<ShareOutcome>
    private let condition = Condition()
    private var nextShare = 0
    private var done: [Bool]
    private var finished = false

    var shareCount: Int { bounds.count - 1 }

    init(record: RecordV2Decoder.Scanned, bytes: [UInt8], previousChain: [UInt8], keys: RecordKeysV2, bounds: [Int]) {
        self.record = record
        self.bytes = bytes
        self.previousChain = previousChain
        self.keys = keys
        self.bounds = bounds
        var offsets: [Int] = []
        offsets.reserveCapacity(record.pages.count)
        var total = 0
        for page in record.pages {
            offsets.append(total)
            total += max(0, page.box.count - 28)
        }
        plaintextOffsets = offsets
        arena = ItemBytes.makeUnzeroedArena(byteCount: total)
        slots = .allocate(capacity: bounds.count - 1)
        slots.initialize(repeating: ShareOutcome())
        done = [Bool](repeating: false, count: bounds.count - 1)
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    /// Claims shares one at a time and opens each, until none is left: what a worker thread does.
    func openShares() {
        while let share = claim() { openAndMark(share) }
    }

    /// The record's entries, in order, once every page verified; or the first failure in page order, or a count
    /// of entries other than the record declares. Called once, on the thread that started the opening.
    func finish() throws(KeychainError) -> ReplayedRecordV2 {
        precondition(!finished, "a record's opening is finished once")
        finished = true
        var result = ReplayedRecordV2(
            kind: record.kind, sequence: record.sequence, part: record.part, chain: Array(bytes[record.chainRange]), end: record.end,
            entries: [], digests: [], deletionTimes: [])
        result.entries.reserveCapacity(Int(record.entryCount))
        result.digests.reserveCapacity(Int(record.entryCount))
        var entryCount = 0
        for share in 0..<shareCount {
            waitFor(share)
            let outcome = slots[share]
            slots[share] = ShareOutcome()
            entryCount += outcome.entries.count
            for entry in outcome.entries {
                switch entry {
                case .put(let id, let attributes, let box, let digests):
                    result.entries.append(RecordV2PagesDecoder.put(id, attributes, box: box, in: bytes))
                    result.digests.append(digests)
                case .delete(let id, let time):
                    result.entries.append(.delete(id: id))
                    result.digests.append(nil)
                    result.deletionTimes.append((id, time))
                case .tombstone(let id, let time):
                    result.deletionTimes.append((id, time))
                }
            }
            if let failure = outcome.failure {
                // The shares after it are not wanted: no thread starts another.
                condition.lock()
                nextShare = shareCount
                condition.unlock()
                throw failure
            }
        }
        guard entryCount == Int(record.entryCount) else {
            throw .corrupted(offset: record.start + 21, reason: "the record declares \(record.entryCount) entries; its pages hold \(entryCount)")
        }
        return result
    }

    /// Returns once share `share` is done: opening unclaimed shares meanwhile, in order, rather than sleeping.
    private func waitFor(_ share: Int) {
        condition.lock()
        while !done[share] {
            if nextShare < shareCount {
                let claimed = nextShare
                nextShare += 1
                condition.unlock()
                openAndMark(claimed)
                condition.lock()
            } else {
                condition.wait()
            }
        }
        condition.unlock()
    }

    private func claim() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        guard nextShare < shareCount else { return nil }
        nextShare += 1
        return nextShare - 1
    }

    private func openAndMark(_ share: Int) {
        slots[share] = open(share)
        condition.lock()
        done[share] = true
        condition.broadcast()
        condition.unlock()
    }

    /// Opens the pages of share `share` in order, stopping at the first that fails.
    private func open(_ share: Int) -> ShareOutcome {
        var outcome = ShareOutcome()
        for index in bounds[share]..<bounds[share + 1] {
            let page = record.pages[index]
            do throws(KeychainError) {
                try RecordV2Decoder.checkRanges(of: page, in: bytes)
                let start = plaintextOffsets[index]
                let parsed = try arena.writeInArena(start..<(start + page.box.count - 28)) { (out) throws(KeychainError) -> [PageEntryV2] in
                    try RecordV2Decoder.decrypt(page, of: record, in: bytes, previousChain: previousChain, keys: keys, into: out)
                    return try RecordV2Decoder.parsePage(UnsafeRawBufferPointer(out), page: page, in: bytes, keys: keys)
                }
                for entry in parsed {
                    switch entry {
                    case .put(let id, let itemClass, let count, let range, let box):
                        let encoded = ByteView(
                            arena, offset: start + range.lowerBound + AttributeCoding.headerByteCount,
                            count: range.count - AttributeCoding.headerByteCount)
                        let attributes = ItemAttributes(itemClass: itemClass, count: count, encoded: encoded)
                        outcome.entries.append(.put(id: id, attributes: attributes, secretBox: box, digests: ItemDigests(id: id, attributes: attributes)))
                    case .delete(let id, let time):
                        outcome.entries.append(.delete(id: id, time: time))
                    case .tombstone(let id, let time):
                        outcome.entries.append(.tombstone(id: id, time: time))
                    }
                }
            } catch {
                outcome.failure = error
                break
            }
        }
        return outcome
    }
}
