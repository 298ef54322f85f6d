/// Replays the records of a file into an index, following SPEC.md §9.2 exactly: every frame verified,
/// only a final record may be dropped as a torn tail, anything else is `corrupted` at its offset.
///
/// A replay starts either at the first record (an empty index) or after the last record already applied to
/// an index (catching up with records another process appended, SPEC.md §16). When it throws, `end`, `head`,
/// `index` and `boxCount` still describe the records before the damage, every one of them verified — which is
/// what salvage keeps (§17).
struct Replay {
    let file: any KeychainFileHandle
    let fileSize: Int
    let context: RecordContext
    private(set) var end: Int
    private(set) var head: Head
    private(set) var tornTail: TornTail?
    var index: ItemIndex
    private(set) var boxCount: UInt64
    /// A sequence number whose chain value to remember (the sequence of a pinned head), and the chain value
    /// found for it, if the replay passed it.
    private let watchedSequence: UInt64?
    private(set) var watchedChain: [UInt8]?
    /// The lock file's acknowledgement for this epoch (SPEC.md §16.1) while it agrees with the records replayed:
    /// dropped if replay reaches its end with another head, or passes it between two records.
    private var acknowledged: Acknowledgement?
    /// Whether replay reached the acknowledged end with the acknowledged head.
    private var acknowledgementConfirmed = false

    /// A replay from the first record of a file.
    init(
        file: any KeychainFileHandle, fileSize: Int, start: Int, context: RecordContext, initialChain: [UInt8],
        watching watchedSequence: UInt64? = nil, acknowledged: Acknowledgement? = nil
    ) {
        self.init(
            file: file, fileSize: fileSize, end: start, context: context,
            head: Head(epoch: context.epoch, sequence: 0, chainValue: initialChain), index: ItemIndex(), boxCount: 0,
            watching: watchedSequence, acknowledged: acknowledged)
    }

    /// A replay that continues after `end`, where `head`, `index` and `boxCount` describe the records before.
    init(
        file: any KeychainFileHandle, fileSize: Int, end: Int, context: RecordContext, head: Head, index: ItemIndex,
        boxCount: UInt64, watching watchedSequence: UInt64? = nil, acknowledged: Acknowledgement? = nil
    ) {
        self.file = file
        self.fileSize = fileSize
        self.context = context
        self.end = end
        self.head = head
        self.index = index
        self.boxCount = boxCount
        self.watchedSequence = watchedSequence
        if watchedSequence == head.sequence { watchedChain = head.chainValue }
        self.acknowledged = acknowledged?.epoch == context.epoch ? acknowledged : nil
        checkAcknowledgement()
    }

    mutating func run() throws(KeychainError) {
        OpeningProgressReporting.verified(end, of: fileSize)
        while end < fileSize {
            checkAcknowledgement()
            let remaining = fileSize - end
            // Step 1: an incomplete frame header.
            guard remaining >= Format.frameHeaderSize else {
                try tail(byteCount: remaining, wholeFrame: false, reason: "incomplete frame header")
                return
            }
            let frameHeader = try file.readExactly(count: Format.frameHeaderSize, at: end)
            var reader = ByteReader(frameHeader)
            let length = (try? reader.readUInt32("length")) ?? 0
            let check = (try? reader.readUInt32("length check")) ?? 0
            // Step 2: the length check. Damage followed by another plausible record is corruption; anything
            // else is what a crash left of the final record.
            guard check == length ^ 0xFFFF_FFFF else {
                if let next = try plausibleFrameHeader(after: end) {
                    throw KeychainError.corrupted(
                        offset: end, reason: "frame length check does not match, and a record follows at \(next)")
                }
                // Either length, the one stored or the one its check implies, that ends the frame exactly at the end
                // of the file makes it a whole frame whose header was damaged, not necessarily bytes a crash left.
                let endsFile = [length, ~check].contains { candidate in
                    candidate >= Format.minimumBodyLength && candidate <= Format.maximumBodyLength
                        && Format.frameHeaderSize + Int(candidate) == remaining
                }
                try tail(
                    byteCount: remaining, wholeFrame: endsFile,
                    reason: endsFile ? "the final record's frame length check does not match" : "damaged or unwritten frame header after the last record")
                return
            }
            // Step 3: the length's range, and a frame that runs past the end of the file.
            guard length >= Format.minimumBodyLength, length <= Format.maximumBodyLength else {
                throw KeychainError.corrupted(offset: end, reason: "frame length \(length) is outside 9 … 268,435,456")
            }
            let frameEnd = end + Format.frameHeaderSize + Int(length)
            guard frameEnd <= fileSize else {
                try tail(byteCount: remaining, wholeFrame: false, reason: "incomplete record (\(remaining) of \(frameEnd - end) bytes)")
                return
            }
            // Step 4: verify; a failure is a torn tail only for the final frame. The body is read box by box,
            // through a bounded window, rather than whole.
            var body = FrameBodyReader(
                file: file, bodyOffset: end + Format.frameHeaderSize, bodyLength: Int(length), windowSize: ParallelTuning.current.windowSize)
            // The entries are applied as they are verified, piece by piece, and the record's items taken out again
            // if it fails: a large record's entries are never all held at once.
            var application = ItemIndex.PiecewiseApplication()
            do {
                let decoded = try RecordDecoder.decode(
                    &body, expectedSequence: head.sequence + 1, previousChain: head.chainValue, context: context,
                    delivering: { (piece, digests: [ItemDigests?]?, entryCount) in
                        index.applyPiece(piece, digests: digests, ofRecordOf: entryCount, to: &application)
                    })
                do {
                    try index.finishApplying(&application)
                } catch {
                    // Step 5: an authentic record that cannot be applied is corruption even at the end.
                    switch error {
                    case .duplicatePrimaryKey(let id):
                        throw FrameProblem(offset: end, reason: "item \(id) would share its primary key with another item", isSemantic: true)
                    case .unknownItem(let id):
                        throw FrameProblem(offset: end, reason: "deletion of item \(id), which does not exist", isSemantic: true)
                    case .classChange(let id):
                        throw FrameProblem(offset: end, reason: "a put changes the class of item \(id)", isSemantic: true)
                    }
                }
                // Step 5: move on.
                head = Head(epoch: context.epoch, sequence: head.sequence + 1, chainValue: decoded.chainValue)
                if head.sequence == watchedSequence { watchedChain = head.chainValue }
                boxCount += UInt64(decoded.boxCount)
                end = frameEnd
                OpeningProgressReporting.verified(end, of: fileSize)
            } catch let problem as FrameProblem {
                index.abandonApplying(&application)
                if let ioError = problem.ioError { throw ioError }
                if frameEnd == fileSize && !problem.isSemantic {
                    try tail(byteCount: remaining, wholeFrame: true, reason: "final record does not verify: \(problem.reason)")
                    return
                }
                throw KeychainError.corrupted(offset: problem.offset, reason: problem.reason)
            } catch {
                index.abandonApplying(&application)
                throw KeychainError.corrupted(offset: end, reason: "\(error)")
            }
        }
        // Every record verified: the file must still hold everything acknowledged.
        checkAcknowledgement()
        // (The lock file's acknowledgement is a pin, SPEC.md §15.4: a file without it was cut short or rolled back.)
        if let acknowledged, acknowledged.end > end {
            throw KeychainError.rolledBack(
                expected: Head(epoch: acknowledged.epoch, sequence: acknowledged.sequence, chainValue: acknowledged.chainValue), found: head)
        }
    }

    /// Follows the acknowledgement as replay moves on: confirmed when replay stands at its end with its head,
    /// dropped (it says nothing about this file's records) when the head there differs or replay passed its end
    /// between two records.
    private mutating func checkAcknowledgement() {
        guard let acknowledgement = acknowledged, !acknowledgementConfirmed else { return }
        if end == acknowledgement.end {
            if head.sequence == acknowledgement.sequence && head.chainValue == acknowledgement.chainValue {
                acknowledgementConfirmed = true
            } else {
                acknowledged = nil
            }
        } else if end > acknowledgement.end {
            acknowledged = nil
        }
    }

    /// Decides what the unverifiable bytes from `end` to the end of the file are (SPEC.md §9.3): damage if the
    /// acknowledgement covers them (thrown as `corrupted`); otherwise a torn tail, which is a known crash remnant
    /// — cut off by the next append — when the acknowledgement ends exactly here or the bytes are not a whole
    /// frame, and may hold acknowledged data when they are a whole frame (one ending exactly at the end of the
    /// file) and nothing shows it was never acknowledged: no writer cuts that off without an explicit repair.
    private mutating func tail(byteCount: Int, wholeFrame: Bool, reason: String) throws(KeychainError) {
        checkAcknowledgement()
        if let acknowledged {
            if acknowledged.end > end {
                throw KeychainError.corrupted(
                    offset: end,
                    reason: "\(reason); records up to offset \(acknowledged.end) were acknowledged as committed, so this is damage, "
                        + "not a crash remnant (open with recovery, or salvage, to read every item that still authenticates)")
            }
            if acknowledgementConfirmed && end == acknowledged.end {
                tornTail = TornTail(
                    offset: end, byteCount: byteCount, reason: "\(reason) (never acknowledged: a crash remnant)", mayHoldAcknowledgedData: false)
                return
            }
        }
        tornTail = TornTail(offset: end, byteCount: byteCount, reason: reason, mayHoldAcknowledgedData: wholeFrame)
    }

    /// The first offset after `offset` holding a plausible frame header (SPEC.md §9.2 step 2): a matching
    /// length check, a length in range that fits in the file, a known kind and a sequence number beyond the
    /// expected one. `nil` if there is none.
    private func plausibleFrameHeader(after offset: Int) throws(KeychainError) -> Int? {
        let minimumSequence = head.sequence + 2
        let chunkSize = 1 << 20
        var chunkStart = offset + 1
        while chunkStart + 17 <= fileSize {
            // Chunks overlap by 16 bytes so that no 17-byte window is missed.
            let chunk = try file.readExactly(count: min(chunkSize + 16, fileSize - chunkStart), at: chunkStart)
            var position = 0
            while position + 17 <= chunk.count && position < chunkSize {
                var reader = ByteReader(chunk, range: position..<(position + 17))
                let length = (try? reader.readUInt32("length")) ?? 0
                let check = (try? reader.readUInt32("check")) ?? 0
                let kind = (try? reader.readUInt8("kind")) ?? 0
                let sequence = (try? reader.readUInt64("sequence")) ?? 0
                let start = chunkStart + position
                if check == length ^ 0xFFFF_FFFF, length >= Format.minimumBodyLength, length <= Format.maximumBodyLength,
                   start + Format.frameHeaderSize + Int(length) <= fileSize, (1...3).contains(kind),
                   sequence >= minimumSequence {
                    return start
                }
                position += 1
            }
            chunkStart += chunkSize
        }
        return nil
    }
}
