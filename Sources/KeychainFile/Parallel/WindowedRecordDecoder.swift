/// Verifies and decodes the entries of a large transaction window by window, opening the boxes of each
/// window on several threads (SPEC.md §9.2 step 4).
///
/// Every box's associated data names the tag of the box before it (§7.2), and that tag is in the file, so
/// the boxes of a record can be opened in any order. For each window ``FrameBodyReader`` loads, the entries
/// are first walked front to back — entry kinds and box lengths, with ``RecordDecoder``'s checks — and the
/// boxes found are then opened (attributes decrypted and decoded, secrets verified, deletions decrypted) by
/// up to ``ParallelTuning/workerCount`` threads, the calling one included. A window's opening runs while the
/// calling thread makes the entries of the window before and hands them on, and walks the next window
/// (``WindowOpening``).
///
/// The result is what ``RecordDecoder``'s sequential loop gives: the same entries in the same order, and if
/// anything fails, the problem the sequential loop meets first. A box that fails is reported before any
/// problem found later in the walk, and of several failing boxes the first in the file wins.
enum WindowedRecordDecoder<Digests: EntryDigests> {
    /// A box field's box: its range in the window and its offset in the file.
    typealias Box = (range: Range<Int>, offset: Int)

    /// A put whose attributes box was opened in an earlier window, its secret box not yet read.
    struct OpenedAttributes: Sendable {
        let id: ItemID
        /// A view of the window's arena (``WindowOpening/plaintexts``), copied into the item's block when the
        /// put is made an entry.
        let attributes: ItemAttributes
        /// The attributes box's tag, which the secret box is chained to.
        let tag: ChainValue
        let boxByteCount: Int
        /// What the index enters the item under, computed here on the opening thread rather than on the
        /// calling thread, which applies every entry in turn (see ``EntryDigests``).
        let digests: Digests
    }

    /// Boxes to open. `previousTagEnd` is where, in the window, the tag of the box before ends; `nil` when
    /// that box was in an earlier window (its tag is the chain value the window starts from).
    enum Job: Sendable {
        /// A put; without `secret` when the secret box is not in this window (only the attributes are opened).
        /// Its attributes are decrypted into the window's arena (``WindowOpening/plaintexts``) at `plaintextAt`.
        case put(entryIndex: UInt32, attributes: Box, plaintextAt: Int, previousTagEnd: Int?, secret: Box?)
        /// The secret box of a put whose attributes were opened with the window before: the first job of its
        /// window, opened on the calling thread once that window's outcomes give the attributes.
        case secret(entryIndex: UInt32, opened: OpenedAttributes, secret: Box)
        case delete(entryIndex: UInt32, box: Box, previousTagEnd: Int?)

        /// About the work of opening the job's boxes: their bytes plus a share for each box.
        var weight: Int {
            switch self {
            case .put(_, let attributes, _, _, let secret): return 256 + attributes.range.count + (secret.map { 128 + $0.range.count } ?? 0)
            case .secret(_, _, let secret): return 128 + secret.range.count
            case .delete(_, let box, _): return 128 + box.range.count
            }
        }
    }

    /// A put whose boxes were opened and verified, its attributes decoded (into an object of their own) and its
    /// secret box at `secretBox` in the window: ``RecordDecoder/putEntry(_:window:secretBox:record:entryIndex:attributesTag:attributesBoxCount:)``
    /// makes it into the item's block on the calling thread (see ``Outcome``).
    struct OpenedPut: Sendable {
        let entryIndex: UInt32
        let attributes: OpenedAttributes
        let secretBox: Range<Int>
    }

    /// What opening a job gave. A put is not made into the block its item keeps (see ``OpenedPut``) on the
    /// thread that opened it: the items a keychain keeps would otherwise be allocated by threads other than the
    /// caller's, in allocator arenas of their own (glibc keeps one per thread), where memory the caller's arena
    /// has free is never reused — 16 MB more resident after a 100,000-item bulk load and a reopen. Nor does
    /// that thread allocate a block for the attributes it decrypts: they go into the window's arena, which the
    /// calling thread made (``WindowOpening/plaintexts``). A block per item made there and freed by the calling
    /// thread had glibc take the opening thread's arena lock for every free, and the two threads contended for
    /// it, a futex sleep and wake for many of the frees.
    enum Outcome: Sendable {
        case put(OpenedPut)
        case entry(DecodedEntry)
        case attributesOpened(OpenedAttributes)
        case failed(FrameProblem)
    }

    /// Decodes the `record.entryCount` entries that follow the transaction's entry count in `reader`. The
    /// caller checks that nothing follows them. The entries go to `deliver` window by window (see
    /// ``RecordDecoder/decode(_:expectedSequence:previousChain:context:delivering:)``).
    static func decodeEntries(
        _ reader: inout FrameBodyReader, record: RecordDecoder.RecordFields, previousChain: [UInt8], tuning: ParallelTuning,
        delivering deliver: RecordDecoder.Delivery<Digests>
    ) throws(FrameProblem) -> RecordDecoder.Summary {
        try withoutActuallyEscaping(deliver) { (deliver) throws(FrameProblem) -> RecordDecoder.Summary in
            var walk = Walk(record: record, tuning: tuning, chain: previousChain, deliver: deliver)
            defer { walk.workers?.close() }
            do throws(FrameProblem) {
                try walk.readEntries(&reader)
            } catch {
                // A problem of the structure comes after the boxes walked before it: those are opened first, and
                // one of them that fails is what the sequential loop would have met. (If the walk failed while
                // opening boxes, nothing is left to open and that failure is rethrown.)
                try walk.openBatch(in: reader.window)
                try walk.finishOpening()
                throw error
            }
            try walk.openBatch(in: reader.window)
            try walk.finishOpening()
            return RecordDecoder.Summary(chainValue: walk.chain, boxCount: walk.boxCount)
        }
    }

    /// The state of one record's walk.
    private struct Walk {
        let record: RecordDecoder.RecordFields
        let tuning: ParallelTuning
        /// Where the entries of each batch go once it is opened.
        let deliver: RecordDecoder.Delivery<Digests>
        /// The tag of the last box before the current batch (after the last batch: the record's chain value).
        var chain: [UInt8]
        /// The entries of the batch being opened; handed on, then emptied.
        var entries: [DecodedEntry] = []
        /// The digests of each put in `entries`, at its index (`nil` for a deletion), handed on with them.
        var digests: [Digests?] = []
        var boxCount = 0
        /// The boxes walked in the current window and not opened yet.
        var jobs: [Job] = []
        /// Where, in the window, the tag of the last box walked ends; `nil` if that box is not in the batch.
        var lastTagEnd: Int? = nil
        /// A put whose attributes box has been walked and whose secret box is being read.
        var pendingPut: (entryIndex: UInt32, attributes: Box, plaintextAt: Int, previousTagEnd: Int?)? = nil
        /// The bytes of the attribute plaintexts of the puts in `jobs` (and `pendingPut`): the size of the arena
        /// their window's opening decrypts them into.
        var plaintextBytes = 0
        /// The secret box of a put whose attributes box ended the window before, read in this one; it is opened
        /// once that window's outcomes give the put's attributes.
        var carriedSecret: (entryIndex: UInt32, secret: Box)? = nil
        /// The attributes of the put whose secret box is `carriedSecret`, once its window's outcomes are in.
        var carried: OpenedAttributes? = nil
        /// The window whose boxes are being opened, and the secret box at its start that needs the attributes
        /// the window before it opened (see ``WindowOpening``).
        var inFlight: (opening: WindowOpening<Digests>, carriedSecret: (entryIndex: UInt32, secret: Box)?)? = nil
        /// The threads opening windows beside the calling one, started with the first window worth sharing;
        /// closed when the record's walk ends.
        var workers: WindowWorkers? = nil

        init(
            record: RecordDecoder.RecordFields, tuning: ParallelTuning, chain: [UInt8],
            deliver: @escaping RecordDecoder.Delivery<Digests>
        ) {
            self.record = record
            self.tuning = tuning
            self.chain = chain
            self.deliver = deliver
        }

        mutating func readEntries(_ reader: inout FrameBodyReader) throws(FrameProblem) {
            for index in 0..<Int(record.entryCount) {
                let entryIndex = UInt32(index)
                try openBatchUnlessBuffered(1, reader)
                let entryKind = try reader.readUInt8("entry kind")
                switch entryKind {
                case 1:
                    let attributes = try readBoxField(&reader, "attributes box")
                    pendingPut = (entryIndex, attributes, plaintextBytes, lastTagEnd)
                    plaintextBytes += attributes.range.count - Format.boxOverhead
                    lastTagEnd = attributes.range.upperBound
                    // If this reads a new window, the batch opened before it takes the pending put's attributes.
                    let secret = try readBoxField(&reader, "secret box")
                    try RecordDecoder.checkSecretBoxSize(secret)
                    if let put = pendingPut {
                        jobs.append(.put(
                            entryIndex: entryIndex, attributes: put.attributes, plaintextAt: put.plaintextAt,
                            previousTagEnd: put.previousTagEnd, secret: secret))
                    } else {
                        // Reading the secret box started a new window: the attributes box went with the one before.
                        carriedSecret = (entryIndex, secret)
                    }
                    pendingPut = nil
                    lastTagEnd = secret.range.upperBound
                    boxCount += 2
                case 2:
                    let box = try readBoxField(&reader, "deletion box")
                    try RecordDecoder.checkDeletionBoxSize(box)
                    jobs.append(.delete(entryIndex: entryIndex, box: box, previousTagEnd: lastTagEnd))
                    lastTagEnd = box.range.upperBound
                    boxCount += 1
                default:
                    throw FrameProblem(offset: reader.bodyOffset + reader.offset, reason: "unknown entry kind \(entryKind)")
                }
            }
        }

        /// ``RecordDecoder/readBoxField(_:_:)``, opening the batch first whenever a read needs a new window.
        private mutating func readBoxField(_ reader: inout FrameBodyReader, _ field: String) throws(FrameProblem) -> Box {
            try openBatchUnlessBuffered(4, reader)
            let length = try RecordDecoder.readBoxLength(&reader, field)
            try openBatchUnlessBuffered(length, reader)
            return try RecordDecoder.readBox(&reader, length: length, field)
        }

        private mutating func openBatchUnlessBuffered(_ count: Int, _ reader: FrameBodyReader) throws(FrameProblem) {
            if !reader.isBuffered(count) { try openBatch(in: reader.window) }
        }

        /// Starts opening the boxes walked in `window` (a pending put's attributes box too) and moves the chain
        /// value to the tag of the last box walked; then finishes opening the window before and hands its
        /// entries on, while other threads open this one. Throws the first failure in file order.
        mutating func openBatch(in window: [UInt8]) throws(FrameProblem) {
            var batch: [Job] = []
            swap(&batch, &jobs)
            // Room for as many jobs as this window had (a pending put's too): grown from empty, the array was
            // copied a dozen times a window, its last copies missing the cache on every job.
            jobs.reserveCapacity(batch.count + 1)
            if let put = pendingPut {
                batch.append(.put(
                    entryIndex: put.entryIndex, attributes: put.attributes, plaintextAt: put.plaintextAt,
                    previousTagEnd: put.previousTagEnd, secret: nil))
                pendingPut = nil
            }
            let secret = carriedSecret
            carriedSecret = nil
            let plaintextByteCount = plaintextBytes
            plaintextBytes = 0
            guard !batch.isEmpty || secret != nil else { return }
            let plaintexts = ItemBytes.makeUnzeroedArena(byteCount: plaintextByteCount)
            let opening = WindowOpening<Digests>(jobs: batch, in: window, plaintexts: plaintexts, after: chain, record: record, tuning: tuning)
            if opening.wantsHelpers {
                if workers == nil { workers = WindowWorkers(count: tuning.workerCount - 1) }
                workers?.post(opening)
            }
            if let end = lastTagEnd { chain = Array(window[(end - 16)..<end]) }
            lastTagEnd = nil
            let previous = inFlight
            inFlight = (opening, secret)
            if let previous {
                do throws(FrameProblem) {
                    try finish(previous, helping: opening)
                } catch {
                    opening.abandon()
                    inFlight = nil
                    throw error
                }
            }
        }

        /// Finishes opening the last window started and hands its entries on.
        mutating func finishOpening() throws(FrameProblem) {
            guard let last = inFlight else { return }
            inFlight = nil
            try finish(last)
        }

        /// Opens the carried secret box at the start of `opened`'s window, waits for the rest of the window,
        /// and hands its entries on; leaves `carried` set to the attributes of a put whose secret box is in the
        /// next window.
        private mutating func finish(
            _ opened: (opening: WindowOpening<Digests>, carriedSecret: (entryIndex: UInt32, secret: Box)?), helping next: WindowOpening<Digests>? = nil
        ) throws(FrameProblem) {
            let window = opened.opening.window
            if let carriedSecret = opened.carriedSecret {
                guard let attributes = carried else {
                    preconditionFailure("a secret box carried into a window without the attributes opened before it")
                }
                carried = nil
                let outcome = WindowedRecordDecoder.open(
                    .secret(entryIndex: carriedSecret.entryIndex, opened: attributes, secret: carriedSecret.secret),
                    in: window, plaintexts: opened.opening.plaintexts, after: [], record: record)
                if case .failed(let problem) = outcome {
                    opened.opening.abandon()
                    throw problem
                }
                try append(outcome, window: window)
            }
            try opened.opening.finish(helping: next) { (outcome) throws(FrameProblem) in try append(outcome, window: window) }
            deliver(entries, digests, Int(record.entryCount))
            entries.removeAll(keepingCapacity: true)
            digests.removeAll(keepingCapacity: true)
        }

        /// Makes an outcome of `window`'s jobs an entry (or the attributes carried to the next window).
        private mutating func append(_ outcome: consuming Outcome, window: [UInt8]) throws(FrameProblem) {
            switch consume outcome {
            case .put(let put):
                entries.append(RecordDecoder.putEntry(
                    (put.attributes.id, put.attributes.attributes), window: window, secretBox: put.secretBox, record: record,
                    entryIndex: put.entryIndex, attributesTag: put.attributes.tag, attributesBoxCount: put.attributes.boxByteCount))
                digests.append(put.attributes.digests)
            case .entry(let entry):
                entries.append(entry)
                digests.append(nil)
            case .attributesOpened(let opened): carried = opened
            case .failed(let problem): throw problem
            }
        }
    }

    /// Opens `jobs[range]` in order, as ``open(_:in:after:record:)`` would one after another, and hands each
    /// outcome to `store` with its index, up to and including the first failure. Returns whether all succeeded.
    ///
    /// The secret boxes of puts are verified eight at a time (``AES/GCM/firstFailingTag(count:using:box:authenticating:)``):
    /// checking one alone runs the batch cipher for its E(J0) block and wastes its other seven lanes, a third of
    /// the cipher's work in opening a typical put. A put's secret box is checked after the attributes of the
    /// puts after it are opened, so before a failure is handed on, the secret boxes of the puts before it are
    /// checked: of the two, the earlier failure in file order is the one handed on.
    static func open(
        _ jobs: [Job], _ range: Range<Int>, in window: [UInt8], plaintexts: ItemBytes, after chain: [UInt8],
        record: RecordDecoder.RecordFields, storing store: (Int, Outcome) -> Void
    ) -> Bool {
        var pending: [PendingSecret] = []
        pending.reserveCapacity(SecretTagBatch.limit)
        for index in range {
            let outcome: Outcome
            if case .put(let entryIndex, let attributes, let plaintextAt, let previousTagEnd, let secret?) = jobs[index] {
                do throws(FrameProblem) {
                    let opened = try openAttributes(
                        attributes, entryIndex: entryIndex, previousTagEnd: previousTagEnd, in: window,
                        into: plaintexts, at: plaintextAt, after: chain, record: record)
                    pending.append(PendingSecret(
                        index: index, put: OpenedPut(entryIndex: entryIndex, attributes: opened, secretBox: secret.range), box: secret))
                    if pending.count == SecretTagBatch.limit, !checkPending(&pending, in: window, record: record, storing: store) {
                        return false
                    }
                    continue
                } catch {
                    outcome = .failed(error)
                }
            } else {
                outcome = open(jobs[index], in: window, plaintexts: plaintexts, after: chain, record: record)
            }
            if case .failed = outcome {
                guard checkPending(&pending, in: window, record: record, storing: store) else { return false }
                store(index, outcome)
                return false
            }
            store(index, outcome)
        }
        return checkPending(&pending, in: window, record: record, storing: store)
    }

    /// A put whose attributes were opened and whose secret box waits to be checked with others (see
    /// ``open(_:_:in:after:record:storing:)``). A struct, not a tuple: an array of tuples copies and destroys its
    /// elements through the runtime's generic tuple functions.
    private struct PendingSecret {
        /// The job's index.
        let index: Int
        let put: OpenedPut
        let box: Box
    }

    /// Checks the pending secret boxes and stores their puts up to the first that fails; false if one failed.
    /// Empties `pending`. (A function of its own rather than one nested in the loop that fills `pending`: a
    /// nested one captures the array, which then has every access checked for exclusivity at run time.)
    private static func checkPending(
        _ pending: inout [PendingSecret], in window: [UInt8], record: RecordDecoder.RecordFields, storing store: (Int, Outcome) -> Void
    ) -> Bool {
        guard !pending.isEmpty else { return true }
        defer { pending.removeAll(keepingCapacity: true) }
        let count = pending.count
        let failing = SecretTagBatch.firstFailing(
            count: count, in: window, box: { pending[$0].box.range },
            writeAAD: {
                record.writeAAD(
                    entryIndex: pending[$0].put.entryIndex, role: .secret, itemID: pending[$0].put.attributes.id,
                    previousChain: pending[$0].put.attributes.tag, into: $1)
            },
            key: record.boxKey)
        for position in 0..<count {
            if position == failing {
                store(pending[position].index, .failed(RecordDecoder.secretBoxProblem(at: pending[position].box.offset)))
                return false
            }
            store(pending[position].index, .put(pending[position].put))
        }
        return true
    }

    /// Opens and decodes a put's attributes box, chained to the tag that ends at `previousTagEnd` in `window`
    /// (`chain` when that box was in an earlier window), into the window's arena `plaintexts` at `plaintextAt`:
    /// the attributes are a view of that part, which the calling thread copies into the item's block.
    private static func openAttributes(
        _ attributes: Box, entryIndex: UInt32, previousTagEnd: Int?, in window: [UInt8], into plaintexts: ItemBytes,
        at plaintextAt: Int, after chain: [UInt8], record: RecordDecoder.RecordFields
    ) throws(FrameProblem) -> OpenedAttributes {
        let previous = previousTagEnd.map { ChainValue(window, endingAt: $0) } ?? ChainValue(chain)
        let count = attributes.range.count - Format.boxOverhead
        let decoded = try plaintexts.writeInArena(plaintextAt..<(plaintextAt + count)) { (plaintext) throws(FrameProblem) in
            try RecordDecoder.openAttributesBox(
                window, attributes.range, at: attributes.offset, record: record, entryIndex: entryIndex, previousChain: previous,
                into: plaintext)
        }
        let header = AttributeCoding.headerByteCount
        let itemAttributes = ItemAttributes(
            itemClass: decoded.itemClass, count: decoded.count,
            encoded: ByteView(plaintexts, offset: plaintextAt + header, count: count - header))
        let tag = ChainValue(window, endingAt: attributes.range.upperBound)
        return OpenedAttributes(
            id: decoded.id, attributes: itemAttributes, tag: tag, boxByteCount: attributes.range.count,
            digests: Digests(id: decoded.id, attributes: itemAttributes))
    }

    /// Opens one job's boxes with ``RecordDecoder``'s checks and messages, a put's attributes into `plaintexts`.
    static func open(
        _ job: Job, in window: [UInt8], plaintexts: ItemBytes, after chain: [UInt8], record: RecordDecoder.RecordFields
    ) -> Outcome {
        func previousChain(_ end: Int?) -> ChainValue { end.map { ChainValue(window, endingAt: $0) } ?? ChainValue(chain) }
        do throws(FrameProblem) {
            switch job {
            case .put(let entryIndex, let attributes, let plaintextAt, let previousTagEnd, let secret):
                let opened = try openAttributes(
                    attributes, entryIndex: entryIndex, previousTagEnd: previousTagEnd, in: window, into: plaintexts,
                    at: plaintextAt, after: chain, record: record)
                guard let secret else { return .attributesOpened(opened) }
                try RecordDecoder.verifySecretBox(
                    window, secret.range, at: secret.offset, record: record, entryIndex: entryIndex, itemID: opened.id,
                    previousChain: opened.tag)
                return .put(OpenedPut(entryIndex: entryIndex, attributes: opened, secretBox: secret.range))
            case .secret(let entryIndex, let opened, let secret):
                try RecordDecoder.verifySecretBox(
                    window, secret.range, at: secret.offset, record: record, entryIndex: entryIndex, itemID: opened.id,
                    previousChain: opened.tag)
                return .put(OpenedPut(entryIndex: entryIndex, attributes: opened, secretBox: secret.range))
            case .delete(let entryIndex, let box, let previousTagEnd):
                let id = try RecordDecoder.openDeletionBox(
                    window, box.range, at: box.offset, record: record, entryIndex: entryIndex, previousChain: previousChain(previousTagEnd))
                return .entry(.delete(id: id))
            }
        } catch {
            return .failed(error)
        }
    }
}
