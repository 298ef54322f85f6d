import Dispatch
@_spi(KeychainFileInternals) import KeychainCrypto

/// Verifies and decodes a version 2 record for replay with its pages opened on several threads: the record's
/// result, or its error, is exactly ``RecordV2Decoder/decode(_:at:previousChain:keys:)``'s.
///
/// A page's associated data names the tag of the page before it, which is in the record's bytes, so pages open in
/// any order (Docs/FormatVersion2.md §5). The record is scanned on the calling thread; its pages are cut into
/// shares (``ParallelTuning/shareBounds(weights:)``) that up to ``ParallelTuning/workerCount`` threads, the calling
/// one included, open — decrypt into the record's arena, check every entry, digest and secret box's tag as
/// ``RecordV2Decoder/parsePage(_:page:in:keys:)`` does, and compute each put's ``ItemDigests`` — each share stopping
/// at its first failing page. The calling thread then takes the shares in page order: the first failure is the
/// one the sequential decoder meets first, and is thrown; otherwise it makes each put's block (attributes and
/// secret box, copied from the arena and the record's bytes) itself, so that the blocks the index keeps are
/// allocated by the thread that frees them (see ``WindowedRecordDecoder/Outcome``).
enum RecordV2PagesDecoder {
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

    static func decode(
        _ bytes: [UInt8], at offset: Int, previousChain: [UInt8], keys: RecordKeysV2, tuning: ParallelTuning = .current
    ) throws(KeychainError) -> ReplayedRecordV2 {
        let scanned = try RecordV2Decoder.scan(bytes, at: offset)
        let pages = scanned.pages
        // Each page's plaintext has its own part of the arena.
        var plaintextOffsets: [Int] = []
        plaintextOffsets.reserveCapacity(pages.count + 1)
        var total = 0
        for page in pages {
            plaintextOffsets.append(total)
            total += max(0, page.box.count - 28)
        }
        let bounds = tuning.shareBounds(weights: pages.map { page in page.secrets.reduce(page.box.count) { $0 + 64 + $1.count } })
        let shares = Shares(
            record: scanned, bytes: bytes, plaintextOffsets: plaintextOffsets, arena: ItemBytes.makeUnzeroedArena(byteCount: total),
            previousChain: previousChain, keys: keys, bounds: bounds)
        let shareCount = bounds.count - 1
        if shareCount == 1 {
            shares.open(0)
        } else {
            DispatchQueue.concurrentPerform(iterations: shareCount) { shares.open($0) }
        }
        var record = ReplayedRecordV2(
            kind: scanned.kind, sequence: scanned.sequence, part: scanned.part, chain: Array(bytes[scanned.chainRange]), end: scanned.end,
            entries: [], digests: [], deletionTimes: [])
        record.entries.reserveCapacity(Int(scanned.entryCount))
        record.digests.reserveCapacity(Int(scanned.entryCount))
        var entryCount = 0
        for share in 0..<shareCount {
            let outcome = shares.take(share)
            entryCount += outcome.entries.count
            for entry in outcome.entries {
                switch entry {
                case .put(let id, let attributes, let box, let digests):
                    record.entries.append(put(id, attributes, box: box, in: bytes))
                    record.digests.append(digests)
                case .delete(let id, let time):
                    record.entries.append(.delete(id: id))
                    record.digests.append(nil)
                    record.deletionTimes.append((id, time))
                case .tombstone(let id, let time):
                    record.deletionTimes.append((id, time))
                }
            }
            if let failure = outcome.failure { throw failure }
        }
        guard entryCount == Int(scanned.entryCount) else {
            throw .corrupted(offset: offset + 21, reason: "the record declares \(scanned.entryCount) entries; its pages hold \(entryCount)")
        }
        return record
    }

    /// The entry of a put whose attributes (a view of the arena) and secret box (`box` of `bytes`) verified: both
    /// copied into one block, which the index keeps as it is (``StoredItem``).
    private static func put(_ id: ItemID, _ attributes: ItemAttributes, box: Range<Int>, in bytes: [UInt8]) -> DecodedEntry {
        let block = attributes.encoded.withUnsafeBytes { encoded in
            bytes.withUnsafeBytes { all in
                ItemBytes.make(attributes: encoded, chain: UnsafeRawBufferPointer(start: nil, count: 0), box: UnsafeRawBufferPointer(rebasing: all[box]))
            }
        }
        // The put's entry in its page: kind, attributes length, the attributes plaintext, secret length, digest.
        let entryBytes = 1 + 4 + AttributeCoding.headerByteCount + attributes.encoded.count + 4 + RecordV2.secretBoxDigestSize
        let secret = SealedSecret(
            box: block.boxView, hasChain: false, sequence: 0, kind: .put, entryCount: 0, entryIndex: 0,
            entryByteCount: RecordV2.boxFieldHeaderSize + box.count + entryBytes)
        return .put(id: id, attributes: ItemAttributes(itemClass: attributes.itemClass, count: attributes.count, encoded: block.attributesView), secret: secret)
    }

    /// A record's pages, cut into shares, and what opening each gave. Each outcome's slot is written by the thread
    /// that opened its share and read by the calling thread once every share is done (`concurrentPerform` returns
    /// only then); each page's part of the arena is written by the thread opening it, and a view of it is made
    /// only after. The rest is never changed. `@unchecked Sendable` for those reasons.
    private final class Shares: @unchecked Sendable {
        let record: RecordV2Decoder.Scanned
        let bytes: [UInt8]
        let plaintextOffsets: [Int]
        let arena: ItemBytes
        let previousChain: [UInt8]
        let keys: RecordKeysV2
        let bounds: [Int]
        private let slots: UnsafeMutableBufferPointer<ShareOutcome>

        init(
            record: RecordV2Decoder.Scanned, bytes: [UInt8], plaintextOffsets: [Int], arena: ItemBytes, previousChain: [UInt8],
            keys: RecordKeysV2, bounds: [Int]
        ) {
            self.record = record
            self.bytes = bytes
            self.plaintextOffsets = plaintextOffsets
            self.arena = arena
            self.previousChain = previousChain
            self.keys = keys
            self.bounds = bounds
            slots = .allocate(capacity: bounds.count - 1)
            slots.initialize(repeating: ShareOutcome())
        }

        deinit {
            slots.deinitialize()
            slots.deallocate()
        }

        /// Opens the pages of share `share` in order, stopping at the first that fails.
        func open(_ share: Int) {
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
            slots[share] = outcome
        }

        /// The outcome of share `share`, moved out of its slot.
        func take(_ share: Int) -> ShareOutcome {
            defer { slots[share] = ShareOutcome() }
            return slots[share]
        }
    }
}
