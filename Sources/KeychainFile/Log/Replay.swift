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

    /// A replay from the first record of a file.
    init(
        file: any KeychainFileHandle, fileSize: Int, start: Int, context: RecordContext, initialChain: [UInt8],
        watching watchedSequence: UInt64? = nil
    ) {
        self.init(
            file: file, fileSize: fileSize, end: start, context: context,
            head: Head(epoch: context.epoch, sequence: 0, chainValue: initialChain), index: ItemIndex(), boxCount: 0,
            watching: watchedSequence)
    }

    /// A replay that continues after `end`, where `head`, `index` and `boxCount` describe the records before.
    init(
        file: any KeychainFileHandle, fileSize: Int, end: Int, context: RecordContext, head: Head, index: ItemIndex,
        boxCount: UInt64, watching watchedSequence: UInt64? = nil
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
    }

    mutating func run() throws(KeychainError) {
        while end < fileSize {
            let remaining = fileSize - end
            // Step 1: an incomplete frame header.
            guard remaining >= Format.frameHeaderSize else {
                tornTail = TornTail(offset: end, byteCount: remaining, reason: "incomplete frame header")
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
                tornTail = TornTail(offset: end, byteCount: remaining, reason: "damaged or unwritten frame header after the last record")
                return
            }
            // Step 3: the length's range, and a frame that runs past the end of the file.
            guard length >= Format.minimumBodyLength, length <= Format.maximumBodyLength else {
                throw KeychainError.corrupted(offset: end, reason: "frame length \(length) is outside 9 … 268,435,456")
            }
            let frameEnd = end + Format.frameHeaderSize + Int(length)
            guard frameEnd <= fileSize else {
                tornTail = TornTail(offset: end, byteCount: remaining, reason: "incomplete record (\(remaining) of \(frameEnd - end) bytes)")
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
                    delivering: { piece, digests, entryCount in
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
            } catch let problem as FrameProblem {
                index.abandonApplying(&application)
                if let ioError = problem.ioError { throw ioError }
                if frameEnd == fileSize && !problem.isSemantic {
                    tornTail = TornTail(offset: end, byteCount: remaining, reason: "final record does not verify: \(problem.reason)")
                    return
                }
                throw KeychainError.corrupted(offset: problem.offset, reason: problem.reason)
            } catch {
                index.abandonApplying(&application)
                throw KeychainError.corrupted(offset: end, reason: "\(error)")
            }
        }
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
