@_spi(KeychainFileInternals) import KeychainCrypto

/// One operation inside a record.
enum LogEntry: Sendable {
    case put(id: ItemID, attributes: ItemAttributes, secret: PendingSecret)
    case delete(id: ItemID)
}

/// A put's plaintext secret until its record is sealed.
enum PendingSecret: Sendable {
    /// The bytes, in an array of their own.
    case bytes([UInt8])
    /// `count` bytes kept in the reserved ``ItemBytes`` block that holds the put's attributes, where the
    /// ciphertext will go (see ``ItemBytes/makeReserved(attributes:secret:)``): how a batch keeps the secrets
    /// of the items it adds, so that a batch of many items holds no array per secret besides the blocks.
    case inReservedBlock(count: Int)

    /// The secret's size in bytes.
    var count: Int {
        switch self {
        case .bytes(let bytes): bytes.count
        case .inReservedBlock(let count): count
        }
    }

    /// A copy of the plaintext; `attributes` are the put's (whose block holds it, for ``inReservedBlock(count:)``).
    func plaintext(attributes: ItemAttributes) -> [UInt8] {
        switch self {
        case .bytes(let bytes): bytes
        case .inReservedBlock: attributes.encoded.storage.reservedSecret()
        }
    }
}

/// A verified, decoded record entry.
enum DecodedEntry: Sendable {
    case put(id: ItemID, attributes: ItemAttributes, secret: SealedSecret)
    case delete(id: ItemID)
}

/// The file-wide context every record box is bound to.
struct RecordContext: Sendable {
    let fileID: [UInt8]
    let epoch: UInt64
    let recordKey: SymmetricKey
    /// `recordKey` prepared once for the boxes (see ``AES/GCM/PreparedKey``).
    let boxKey: AES.GCM.PreparedKey
    /// What the bytes that vary between the attributes boxes of one record — the entry index and the previous chain
    /// value, both public — add to GHASH (see ``boxKey(forRecord:kind:entryCount:)``).
    let attributesBoxFields: AES.GCM.PublicFieldTables

    init(fileID: [UInt8], epoch: UInt64, recordKey: SymmetricKey) {
        self.fileID = fileID
        self.epoch = epoch
        self.recordKey = recordKey
        // A record key is the 32 bytes HKDF derives (SPEC.md §6), never a length read from a file; the ranges are
        // BoxAAD's own.
        guard let boxKey = try? AES.GCM.PreparedKey(recordKey),
            let fields = try? AES.GCM.PublicFieldTables(
                key: boxKey, associatedDataByteCount: BoxAAD.size, varying: [BoxAAD.entryIndexRange, BoxAAD.previousChainRange])
        else { preconditionFailure("a record key is not an AES key") }
        self.boxKey = boxKey
        attributesBoxFields = fields
    }

    /// The bytes of associated data that every box of one record begins with: magic, file id, epoch and the
    /// sequence number's first half (SPEC.md §7.2), two GHASH blocks.
    static let sharedAADPrefixSize = 32

    /// The fewest entries a record has for its attributes boxes to start GHASH after their whole associated data
    /// (below): preparing that costs about what it saves on one box.
    static let attributesTemplateMinimumEntries: UInt32 = 8

    /// ``boxKey`` holding the GHASH state after the first ``sharedAADPrefixSize`` bytes of associated data of
    /// the boxes of one record: each box's GHASH starts there and absorbs two blocks fewer (of six or more: five
    /// of associated data, the ciphertext's and the lengths). In a record of at least
    /// ``attributesTemplateMinimumEntries`` entries, an attributes box starts after all five: its associated data
    /// differs from the record's other attributes boxes' only in the entry index and the previous chain value,
    /// which are public (in the file in the clear), and ``attributesBoxFields`` holds what they add. Tags are the
    /// same as with ``boxKey``.
    func boxKey(forRecord sequence: UInt64, kind: RecordKind, entryCount: UInt32) -> AES.GCM.PreparedKey {
        withUnsafeTemporaryAllocation(byteCount: BoxAAD.size, alignment: 8) { aad in
            BoxAAD.writeWithZeroChain(
                fileID: fileID, epoch: epoch, sequence: sequence, kind: kind, entryCount: entryCount, entryIndex: 0,
                role: .attributes, itemID: nil, into: aad)
            let prefix = UnsafeRawBufferPointer(rebasing: aad[..<Self.sharedAADPrefixSize])
            guard entryCount >= Self.attributesTemplateMinimumEntries else { return boxKey.sharingAssociatedDataPrefix(prefix) }
            return boxKey.sharingAssociatedData(prefix: prefix, template: UnsafeRawBufferPointer(aad), publicFields: attributesBoxFields)
        }
    }
}

/// Encodes records into frames (SPEC.md §7), sealing every box.
enum RecordEncoder {
    /// What was written and what the index needs to know about it.
    struct Encoded {
        /// The bytes of the frame (header and body).
        let frameCount: Int
        /// The tag of the last box: the record's chain value.
        let chainValue: [UInt8]
        /// Where each put's secret went, in entry order (deletes have none): what the index gives the items.
        /// Kept this small (24 bytes a put) because a batch of many items holds it beside everything else.
        /// Empty when the encoder did not keep the boxes (`keepingSecrets: false`): see ``writtenPuts``.
        let puts: [SealedPut]
        /// Where each put's secret box went in the frame, in entry order, when the encoder did not keep the
        /// boxes (`keepingSecrets: false`); empty otherwise. 12 bytes a put: a rewrite holds these for every
        /// item until the new file is in place.
        let writtenPuts: [WrittenPut]
        /// Boxes sealed in this record.
        let boxCount: Int
        let sequence: UInt64
        let kind: RecordKind
        let entryCount: UInt32

        /// The sealed secret of `put`, as a reader of the record would make it.
        func secret(of put: SealedPut) -> SealedSecret {
            SealedSecret(
                box: put.box, hasChain: true, sequence: sequence, kind: kind, entryCount: entryCount,
                entryIndex: put.entryIndex, entryByteCount: Int(put.entryByteCount))
        }

        /// The entries as a reader would decode them, given the entries that were encoded.
        func decodedEntries(of entries: [LogEntry]) -> [DecodedEntry] {
            var puts = self.puts.makeIterator()
            return entries.map { entry in
                switch entry {
                case .put(let id, let attributes, _): .put(id: id, attributes: attributes, secret: secret(of: puts.next()!))
                case .delete(let id): .delete(id: id)
                }
            }
        }
    }

    /// Where a put's secret box went in the frame, for a record whose boxes the encoder only wrote.
    struct WrittenPut {
        /// The offset of the box (after its length field) in the frame.
        let secretFrameOffset: UInt32
        let entryIndex: UInt32
        /// See ``SealedSecret/entryByteCount``.
        let entryByteCount: UInt32
    }

    /// A put's sealed secret box and the fields of it that differ from put to put within a record.
    struct SealedPut {
        let box: ByteView
        let entryIndex: UInt32
        /// See ``SealedSecret/entryByteCount``.
        let entryByteCount: UInt32
    }

    /// The most bytes of a frame held in memory before they are handed to `write`.
    static let chunkSize = 1 << 20

    /// Seals `entries` as one record and hands its frame to `write` in pieces of about ``chunkSize`` bytes,
    /// each with its offset in the frame, so that a large batch is never held whole in memory. A frame of at
    /// most one piece is handed over in one call; in a longer one the first piece, which holds the frame
    /// header and its length, comes last. If this throws, some pieces may have been written.
    ///
    /// Unless `keepingSecrets` is false, each put's sealed secret box stays in memory (in the block a batch
    /// reserved for the item, or in an arena) and ``Encoded/puts`` views it. A rewrite passes false: the boxes of
    /// its puts (which have no reserved block) are only written, and ``Encoded/writtenPuts`` say where in the
    /// frame each box went, so that the rewrite can read them back once the new file is in place instead of
    /// holding them all until then.
    static func encode<Entries: RandomAccessCollection<LogEntry>, Generator: RandomNumberGenerator>(
        _ entries: Entries, sequence: UInt64, previousChain: [UInt8], context: RecordContext, keepingSecrets: Bool = true,
        using generator: inout Generator, writingTo write: (_ bytes: [UInt8], _ frameOffset: Int) throws(KeychainError) -> Void
    ) throws(KeychainError) -> Encoded where Entries.Index == Int {
        precondition(entries.startIndex == 0, "entries are numbered from 0")
        guard !entries.isEmpty else { throw .invalidParameter("a record needs at least one entry") }
        guard entries.count <= Int(Format.maximumTransactionEntries) else {
            throw .limitReached("more than 16,777,216 operations in one batch")
        }
        let kind: RecordKind
        if entries.count > 1 {
            kind = .transaction
        } else if case .put = entries[0] {
            kind = .put
        } else {
            kind = .delete
        }

        let entryCount = UInt32(entries.count)
        var writer = ByteWriter(capacity: min(64 + entries.count * 400, chunkSize + 4096))
        // The first piece (with the frame header) is kept until the body's length is known; later pieces are
        // written as they fill, at `written` bytes into the frame.
        var firstPiece: [UInt8]? = nil
        var written = 0
        func flushIfFull() throws(KeychainError) {
            guard writer.count >= chunkSize else { return }
            guard written + writer.count - Format.frameHeaderSize <= Int(Format.maximumBodyLength) else {
                throw .limitReached("the record would be more than 256 MiB (use smaller batches)")
            }
            if firstPiece == nil {
                firstPiece = writer.bytes
            } else {
                try write(writer.bytes, written)
            }
            written += writer.count
            writer.removeAll()
        }
        writer.writeUInt32(0)  // body length, set below
        writer.writeUInt32(0)  // length check, set below
        writer.writeUInt8(kind.rawValue)
        writer.writeUInt64(sequence)
        if kind == .transaction { writer.writeUInt32(UInt32(entries.count)) }

        let sealer = try RecordSealer(
            context: context, sequence: sequence, kind: kind, entryCount: entryCount, tuning: ParallelTuning.current)
        var chain = previousChain
        var puts: [SealedPut] = []
        var writtenPuts: [WrittenPut] = []
        // Exactly one per put: a batch of many items holds this beside everything else, so no doubling slack.
        let putCount = entries.reduce(0) { total, entry in if case .put = entry { total + 1 } else { total } }
        if keepingSecrets { puts.reserveCapacity(putCount) } else { writtenPuts.reserveCapacity(putCount) }
        // Secrets of puts without a reserved block (see ItemBytes) are sealed into one arena, rather than into a
        // block each (a malloc chunk and an object header per secret).
        let arenaByteCount = entries.reduce(0) { total, entry in
            guard keepingSecrets, case .put(_, let attributes, let secret) = entry, !hasReservedBlock(attributes, secretCount: secret.count) else {
                return total
            }
            return total + 16 + secret.count + Format.boxOverhead
        }
        // Those secrets alone would make the record too large: refused before anything is allocated or sealed.
        guard arenaByteCount <= Int(Format.maximumBodyLength) else {
            throw .limitReached("the record would be more than 256 MiB (use smaller batches)")
        }
        let arena = arenaByteCount > 0 ? ItemBytes.makeArena(byteCount: arenaByteCount) : nil
        var arenaOffset = 0
        var boxCount = 0
        var start = 0
        // The window's attributes and deletion boxes, allocated here (not on the sealing threads) and reused.
        var boxes: [UInt8] = []
        while start < entries.count {
            let end = RecordSealer.windowEnd(of: entries, from: start, countingSecrets: !keepingSecrets)
            // Step 1 (see RecordSealer): nonces in entry order, and a place for each secret box.
            var jobs: [RecordSealer.Job] = []
            jobs.reserveCapacity(end - start)
            var boxOffset = 0
            for index in start..<end {
                let entry = entries[index]
                let boxByteCount = RecordSealer.Job.firstBoxByteCount(entry)
                // The first box's room, and a secret box's when it is sealed into the window too (set below).
                var windowRoom = boxByteCount
                defer { boxOffset += windowRoom }
                guard case .put(_, let attributes, let secret) = entry else {
                    jobs.append(RecordSealer.Job(
                        entryIndex: UInt32(index), entry: entry, nonce: AES.GCM.Nonce(using: &generator), secretNonce: nil,
                        secretTarget: nil, secretPlaintext: nil, boxOffset: boxOffset, boxByteCount: boxByteCount))
                    continue
                }
                guard secret.count <= Format.maximumSecretSize else {
                    throw .invalidParameter("the secret is \(secret.count) bytes; the limit is 1,048,576")
                }
                let nonce = AES.GCM.Nonce(using: &generator)
                let secretNonce = AES.GCM.Nonce(using: &generator)
                let block = attributes.encoded.storage
                let target: RecordSealer.SecretTarget
                let plaintext: [UInt8]?
                if !keepingSecrets, case .bytes(let bytes) = secret {
                    target = .window(offset: boxOffset + boxByteCount)
                    plaintext = bytes
                    windowRoom += secret.count + Format.boxOverhead
                } else if hasReservedBlock(attributes, secretCount: secret.count), block.claimReserved() {
                    // Sealed in place: the plaintext is where the ciphertext goes (a batch put it there, or it is
                    // copied there).
                    target = .reserved(block)
                    if case .bytes(let bytes) = secret { plaintext = bytes } else { plaintext = nil }
                } else {
                    guard case .bytes(let bytes) = secret else {
                        // Only a batch's own add keeps a secret in a reserved block, one block per put.
                        throw .invalidParameter("internal error: a secret kept in a reserved block that is not the put's own")
                    }
                    plaintext = bytes
                    let room = 16 + secret.count + Format.boxOverhead
                    // The arena was sized from the reserved blocks; a put whose block an earlier put of this record
                    // claimed (no writer makes one today) gets an arena of its own.
                    if let arena, arenaOffset + room <= arenaByteCount {
                        target = .arena(arena, offset: arenaOffset)
                        arenaOffset += room
                    } else {
                        target = .arena(ItemBytes.makeArena(byteCount: room), offset: 0)
                    }
                }
                jobs.append(RecordSealer.Job(
                    entryIndex: UInt32(index), entry: entry, nonce: nonce, secretNonce: secretNonce, secretTarget: target,
                    secretPlaintext: plaintext, boxOffset: boxOffset, boxByteCount: boxByteCount))
            }
            if boxes.count < boxOffset { boxes = [UInt8](repeating: 0, count: boxOffset) }
            try boxes.withMutableBytes { (buffer) throws(KeychainError) in
                // Step 2: every box sealed with a zero previous chain value, on several threads for a large window.
                try sealer.seal(jobs, into: buffer)
                // Step 3: tags completed in file order, and the boxes written.
                for job in jobs {
                    switch try sealer.complete(job, in: buffer, after: &chain, writingTo: &writer, at: written) {
                    case .kept(let secretBox)?:
                        boxCount += 2
                        puts.append(SealedPut(
                            box: secretBox, entryIndex: job.entryIndex,
                            entryByteCount: UInt32(RecordCodec.putEntryByteCount(kind, job.boxByteCount, secretBox.count))))
                    case .written(let frameOffset, let byteCount)?:
                        boxCount += 2
                        // Frames are at most 256 MiB + 8 bytes (checked as the pieces are written).
                        writtenPuts.append(WrittenPut(
                            secretFrameOffset: UInt32(truncatingIfNeeded: frameOffset), entryIndex: job.entryIndex,
                            entryByteCount: UInt32(RecordCodec.putEntryByteCount(kind, job.boxByteCount, byteCount))))
                    case nil:
                        boxCount += 1
                    }
                    try flushIfFull()
                }
            }
            start = end
        }

        let frameCount = written + writer.count
        let bodyLength = frameCount - Format.frameHeaderSize
        guard bodyLength <= Int(Format.maximumBodyLength) else {
            throw .limitReached("the record would be \(bodyLength) bytes; the limit is 256 MiB (use smaller batches)")
        }
        if let first = firstPiece {
            if writer.count > 0 { try write(writer.bytes, written) }
            writer = ByteWriter(bytes: first)
        }
        writer.setUInt32(UInt32(bodyLength), at: 0)
        writer.setUInt32(UInt32(bodyLength) ^ 0xFFFF_FFFF, at: 4)
        try write(writer.bytes, 0)
        return Encoded(
            frameCount: frameCount, chainValue: chain, puts: puts, writtenPuts: writtenPuts, boxCount: boxCount,
            sequence: sequence, kind: kind, entryCount: entryCount)
    }

    /// Whether `attributes` sit at the start of a reserved block (see ItemBytes) whose box fits a secret of
    /// `secretCount` bytes: where a batch's added item has its secret sealed.
    private static func hasReservedBlock(_ attributes: ItemAttributes, secretCount: Int) -> Bool {
        let block = attributes.encoded.storage
        let layout = block.layout
        return layout.isReserved && attributes.encoded.offset == 0 && attributes.encoded.count == layout.attributesByteCount
            && layout.boxByteCount == secretCount + Format.boxOverhead
    }
}

/// Sizes of record structures shared by the encoder and the decoder.
enum RecordCodec {
    /// The file bytes of one put entry (see ``SealedSecret/entryByteCount``).
    static func putEntryByteCount(_ kind: RecordKind, _ attributesBoxCount: Int, _ secretBoxCount: Int) -> Int {
        (kind == .transaction ? 1 : Format.frameHeaderSize + 9) + 4 + attributesBoxCount + 4 + secretBoxCount
    }
}

/// Why a frame failed: the offset (in the file) and a reason. A structural or authentication failure of
/// the final frame is a torn tail or damage, as SPEC.md §9.3 decides; a semantic one (an authentic record
/// that makes no sense) is always corruption (SPEC.md §9.2 steps 4–5).
struct FrameProblem: Error {
    let offset: Int
    let reason: String
    var isSemantic = false
    /// The file's error, when reading the frame failed (not a problem of the frame: rethrown as it is).
    var ioError: KeychainError? = nil
}

/// Verifies and decodes one frame body (SPEC.md §9.2 step 4).
enum RecordDecoder {
    struct Decoded {
        let entries: [DecodedEntry]
        let chainValue: [UInt8]
        let boxCount: Int
    }

    /// What every box of a record is bound to besides its own role, item id and previous chain value.
    struct RecordFields: Sendable {
        let sequence: UInt64
        let kind: RecordKind
        let entryCount: UInt32
        let context: RecordContext
        /// The record key holding the GHASH state after the associated data all the record's boxes begin with
        /// (``RecordContext/boxKey(forRecord:kind:entryCount:)``).
        let boxKey: AES.GCM.PreparedKey

        init(sequence: UInt64, kind: RecordKind, entryCount: UInt32, context: RecordContext) {
            self.sequence = sequence
            self.kind = kind
            self.entryCount = entryCount
            self.context = context
            boxKey = context.boxKey(forRecord: sequence, kind: kind, entryCount: entryCount)
        }

        /// Writes the associated data of one of the record's boxes into `out` (``BoxAAD/size`` bytes).
        func writeAAD(
            entryIndex: UInt32, role: BoxRole, itemID: ItemID?, previousChain: ChainValue, into out: UnsafeMutableRawBufferPointer
        ) {
            BoxAAD.write(
                fileID: context.fileID, epoch: context.epoch, sequence: sequence, kind: kind, entryCount: entryCount, entryIndex: entryIndex,
                role: role, itemID: itemID, previousChain: previousChain, into: out)
        }

        /// Calls `body` with the associated data of one of the record's boxes, written into scratch memory rather
        /// than an allocation of its own.
        func withAAD<Result>(
            entryIndex: UInt32, role: BoxRole, itemID: ItemID?, previousChain: ChainValue, _ body: (UnsafeRawBufferPointer) -> Result
        ) -> Result {
            withUnsafeTemporaryAllocation(byteCount: BoxAAD.size, alignment: 8) { out in
                writeAAD(entryIndex: entryIndex, role: role, itemID: itemID, previousChain: previousChain, into: out)
                return body(UnsafeRawBufferPointer(out))
            }
        }
    }

    /// Verifies and decodes the frame body (kind, sequence, payload) that `reader` reads, front to back: only
    /// the window being verified is in memory, not the whole record. A transaction of at least
    /// ``ParallelTuning/minimumParallelEntries`` entries has the boxes of each window opened by
    /// ``WindowedRecordDecoder`` on several threads, with the same results and errors.
    static func decode(
        _ reader: inout FrameBodyReader, expectedSequence: UInt64, previousChain: [UInt8], context: RecordContext
    ) throws(FrameProblem) -> Decoded {
        var entries: [DecodedEntry] = []
        let summary = try decode(
            &reader, expectedSequence: expectedSequence, previousChain: previousChain, context: context,
            delivering: { piece, _, _ in entries.append(contentsOf: piece) })
        return Decoded(entries: entries, chainValue: summary.chainValue, boxCount: summary.boxCount)
    }

    /// The record's chain value and box count, once every entry was verified and handed on.
    struct Summary {
        let chainValue: [UInt8]
        let boxCount: Int
    }

    /// Where ``decode(_:expectedSequence:previousChain:context:delivering:)`` hands a record's entries: a piece
    /// of them in order; the ``ItemDigests`` of each put in the piece at its index, where the decoder computed
    /// them beside the decryption (`nil` when it did not: the caller computes them); and the record's entry count.
    typealias Delivery = (_ piece: [DecodedEntry], _ digests: [ItemDigests?]?, _ entryCount: Int) -> Void

    /// ``decode(_:expectedSequence:previousChain:context:)``, handing the entries to `deliver` in pieces as
    /// they are verified, in order, with the record's entry count, rather than collecting them: replay applies
    /// a large record piece by piece and never holds all its entries. Entries handed over before a failure
    /// belong to a record that does not verify; the caller undoes whatever it did with them.
    static func decode(
        _ reader: inout FrameBodyReader, expectedSequence: UInt64, previousChain: [UInt8], context: RecordContext,
        delivering deliver: Delivery
    ) throws(FrameProblem) -> Summary {
        let bodyOffset = reader.bodyOffset
        func problem(_ reason: String) -> FrameProblem { FrameProblem(offset: bodyOffset + reader.offset, reason: reason) }
        let rawKind = try reader.readUInt8("kind")
        guard let kind = RecordKind(rawValue: rawKind) else { throw problem("unknown record kind \(rawKind)") }
        let sequence = try reader.readUInt64("sequence")
        guard sequence == expectedSequence else {
            throw problem("sequence number \(sequence), expected \(expectedSequence) (a record is missing, repeated or out of order)")
        }
        var entryKinds: [UInt8] = []
        let entryCount: UInt32
        switch kind {
        case .put: entryCount = 1; entryKinds = [1]
        case .delete: entryCount = 1; entryKinds = [2]
        case .transaction:
            let count = try reader.readUInt32("entry count")
            guard count >= 1, count <= Format.maximumTransactionEntries else {
                throw problem("transaction entry count \(count) is outside 1 … 16,777,216")
            }
            entryCount = count
        }
        let record = RecordFields(sequence: sequence, kind: kind, entryCount: entryCount, context: context)
        if kind == .transaction {
            let tuning = ParallelTuning.current
            if tuning.workerCount > 1 && Int(entryCount) >= tuning.minimumParallelEntries {
                let decoded = try WindowedRecordDecoder.decodeEntries(
                    &reader, record: record, previousChain: previousChain, tuning: tuning, delivering: deliver)
                guard reader.isAtEnd else { throw problem("\(reader.remaining) unexpected bytes after the last box") }
                return decoded
            }
        }
        var chain = ChainValue(previousChain)
        var entries: [DecodedEntry] = []
        entries.reserveCapacity(min(Int(entryCount), piece))
        var boxCount = 0
        for index in 0..<Int(entryCount) {
            if entries.count == piece {
                deliver(entries, nil, Int(entryCount))
                entries.removeAll(keepingCapacity: true)
            }
            let entryIndex = UInt32(index)
            let entryKind = kind == .transaction ? try reader.readUInt8("entry kind") : entryKinds[0]
            switch entryKind {
            case 1:
                let attributesBox = try readBoxField(&reader, "attributes box")
                let decoded = try openAttributesBox(
                    reader.window, attributesBox.range, at: attributesBox.offset, record: record, entryIndex: entryIndex, previousChain: chain)
                let attributesTag = ChainValue(reader.window, endingAt: attributesBox.range.upperBound)
                let secretBox = try readBoxField(&reader, "secret box")
                try checkSecretBoxSize(secretBox)
                try verifySecretBox(
                    reader.window, secretBox.range, at: secretBox.offset, record: record, entryIndex: entryIndex, itemID: decoded.id,
                    previousChain: attributesTag)
                chain = ChainValue(reader.window, endingAt: secretBox.range.upperBound)
                boxCount += 2
                entries.append(putEntry(
                    decoded, window: reader.window, secretBox: secretBox.range, record: record, entryIndex: entryIndex,
                    attributesTag: attributesTag, attributesBoxCount: attributesBox.range.count))
            case 2:
                let box = try readBoxField(&reader, "deletion box")
                try checkDeletionBoxSize(box)
                let id = try openDeletionBox(reader.window, box.range, at: box.offset, record: record, entryIndex: entryIndex, previousChain: chain)
                chain = ChainValue(reader.window, endingAt: box.range.upperBound)
                boxCount += 1
                entries.append(.delete(id: id))
            default:
                throw problem("unknown entry kind \(entryKind)")
            }
        }
        guard reader.isAtEnd else { throw problem("\(reader.remaining) unexpected bytes after the last box") }
        deliver(entries, nil, Int(entryCount))
        return Summary(chainValue: chain.bytes, boxCount: boxCount)
    }

    /// Entries handed on at a time by the sequential loop.
    private static let piece = 1_024

    /// Reads `u32 length ‖ box`; the length must be at least 28. Returns the box's range in the reader's
    /// window and its offset in the file.
    static func readBoxField(
        _ reader: inout FrameBodyReader, _ field: String
    ) throws(FrameProblem) -> (range: Range<Int>, offset: Int) {
        let length = try readBoxLength(&reader, field)
        return try readBox(&reader, length: length, field)
    }

    /// The first half of ``readBoxField(_:_:)``: reads the box length, which must be at least 28.
    static func readBoxLength(_ reader: inout FrameBodyReader, _ field: String) throws(FrameProblem) -> Int {
        let length = Int(try reader.readUInt32("\(field) length"))
        guard length >= Format.boxOverhead else {
            throw FrameProblem(offset: reader.bodyOffset + reader.offset - 4, reason: "truncated \(field) (shorter than 28 bytes)")
        }
        return length
    }

    /// The second half of ``readBoxField(_:_:)``: the box's range in the reader's window and its offset in the
    /// file.
    static func readBox(
        _ reader: inout FrameBodyReader, length: Int, _ field: String
    ) throws(FrameProblem) -> (range: Range<Int>, offset: Int) {
        let offset = reader.bodyOffset + reader.offset
        return (try reader.read(length, field), offset)
    }

    /// A secret box holds at most 1 MiB.
    static func checkSecretBoxSize(_ box: (range: Range<Int>, offset: Int)) throws(FrameProblem) {
        guard box.range.count - Format.boxOverhead <= Format.maximumSecretSize else {
            throw FrameProblem(offset: box.offset, reason: "secret larger than 1 MiB")
        }
    }

    /// A deletion box is exactly 44 bytes.
    static func checkDeletionBoxSize(_ box: (range: Range<Int>, offset: Int)) throws(FrameProblem) {
        guard box.range.count == Format.deletionBoxSize else {
            throw FrameProblem(offset: box.offset - 4, reason: "a deletion box must be 44 bytes, not \(box.range.count)")
        }
    }

    /// Opens an attributes box (at `offset` in the file, `range` in `window`) and decodes its plaintext; a
    /// plaintext that does not decode is a semantic problem (SPEC.md §9.2 step 5).
    static func openAttributesBox(
        _ window: [UInt8], _ range: Range<Int>, at offset: Int, record: RecordFields, entryIndex: UInt32, previousChain: ChainValue
    ) throws(FrameProblem) -> (id: ItemID, attributes: ItemAttributes) {
        let count = range.count - Format.boxOverhead
        // The plaintext goes to scratch memory (on the stack for the usual few hundred bytes): the attributes are
        // copied into an object of their own once they decode.
        let opened: Result<(id: ItemID, attributes: ItemAttributes), FrameProblem> = withUnsafeTemporaryAllocation(
            byteCount: max(count, 1), alignment: 16
        ) { scratch in
            let plaintext = UnsafeMutableRawBufferPointer(rebasing: scratch[..<count])
            do throws(FrameProblem) {
                let checked = try openAttributesBox(
                    window, range, at: offset, record: record, entryIndex: entryIndex, previousChain: previousChain, into: plaintext)
                return .success(AttributeCoding.keep(checked, of: UnsafeRawBufferPointer(plaintext)))
            } catch {
                return .failure(error)
            }
        }
        return try opened.get()
    }

    /// ``openAttributesBox(_:_:at:record:entryIndex:previousChain:)`` into `plaintext` (exactly the box's plaintext
    /// size), copying nothing: returns what the plaintext's header holds, its attributes being bytes
    /// `AttributeCoding.headerByteCount...` of `plaintext`, checked. What `plaintext` holds when this throws is
    /// unspecified (and not to be read).
    static func openAttributesBox(
        _ window: [UInt8], _ range: Range<Int>, at offset: Int, record: RecordFields, entryIndex: UInt32, previousChain: ChainValue,
        into plaintext: UnsafeMutableRawBufferPointer
    ) throws(FrameProblem) -> (id: ItemID, itemClass: ItemClass, count: Int) {
        precondition(plaintext.count == range.count - Format.boxOverhead, "the box's plaintext size")
        let authentic = record.withAAD(entryIndex: entryIndex, role: .attributes, itemID: nil, previousChain: previousChain) {
            open(window, range, aad: $0, key: record.boxKey, into: plaintext)
        }
        guard authentic else { throw boxProblem(at: offset) }
        do throws(AttributeDecodingError) {
            return try AttributeCoding.check(UnsafeRawBufferPointer(plaintext))
        } catch {
            throw FrameProblem(
                offset: offset, reason: "attributes: \(error.reason) (at byte \(error.offset) of the plaintext)", isSemantic: true)
        }
    }

    /// Checks a secret box's tag (it is decrypted only when the secret is read).
    static func verifySecretBox(
        _ window: [UInt8], _ range: Range<Int>, at offset: Int, record: RecordFields, entryIndex: UInt32, itemID: ItemID,
        previousChain: ChainValue
    ) throws(FrameProblem) {
        let authentic = record.withAAD(entryIndex: entryIndex, role: .secret, itemID: itemID, previousChain: previousChain) { aad in
            window.withUnsafeBytes { all in
                (try? AES.GCM.verify(UnsafeRawBufferPointer(rebasing: all[range]), using: record.boxKey, authenticating: aad)) != nil
            }
        }
        guard authentic else { throw secretBoxProblem(at: offset) }
    }

    /// Opens a deletion box: its plaintext is the id of the item it deletes.
    static func openDeletionBox(
        _ window: [UInt8], _ range: Range<Int>, at offset: Int, record: RecordFields, entryIndex: UInt32, previousChain: ChainValue
    ) throws(FrameProblem) -> ItemID {
        var plaintext = [UInt8](repeating: 0, count: range.count - Format.boxOverhead)
        let authentic = record.withAAD(entryIndex: entryIndex, role: .deletion, itemID: nil, previousChain: previousChain) { aad in
            plaintext.withUnsafeMutableBytes { open(window, range, aad: aad, key: record.boxKey, into: $0) }
        }
        guard authentic else { throw boxProblem(at: offset) }
        guard plaintext.count == ItemID.byteCount, let id = try? ItemID(bytes: plaintext) else {
            throw FrameProblem(offset: offset, reason: "a deletion must hold a 16-byte item id")
        }
        return id
    }

    /// The decoded put entry for an opened attributes box and a verified secret box (`secretBox` in
    /// `window`): the attributes, the chain value and the box copied into one ``ItemBytes`` object, the one
    /// the index keeps for the item.
    static func putEntry(
        _ decoded: (id: ItemID, attributes: ItemAttributes), window: [UInt8], secretBox: Range<Int>, record: RecordFields,
        entryIndex: UInt32, attributesTag: ChainValue, attributesBoxCount: Int
    ) -> DecodedEntry {
        let object = decoded.attributes.encoded.withUnsafeBytes { attributes in
            attributesTag.withUnsafeBytes { chain in
                window.withUnsafeBytes { all in
                    ItemBytes.make(attributes: attributes, chain: chain, box: UnsafeRawBufferPointer(rebasing: all[secretBox]))
                }
            }
        }
        let attributes = ItemAttributes(itemClass: decoded.attributes.itemClass, count: decoded.attributes.count, encoded: object.attributesView)
        return .put(id: decoded.id, attributes: attributes, secret: SealedSecret(
            box: object.boxView, hasChain: true, sequence: record.sequence, kind: record.kind, entryCount: record.entryCount,
            entryIndex: entryIndex, entryByteCount: RecordCodec.putEntryByteCount(record.kind, attributesBoxCount, secretBox.count)))
    }

    /// Opens the box at `range` in `body` into `plaintext` (its size); false when it does not authenticate.
    private static func open(
        _ body: [UInt8], _ range: Range<Int>, aad: UnsafeRawBufferPointer, key: AES.GCM.PreparedKey, into plaintext: UnsafeMutableRawBufferPointer
    ) -> Bool {
        body.withUnsafeBytes { all in
            (try? AES.GCM.open(UnsafeRawBufferPointer(rebasing: all[range]), using: key, authenticating: aad, into: plaintext)) != nil
        }
    }

    /// The problem of an attributes or deletion box at `offset` in the file that does not authenticate.
    static func boxProblem(at offset: Int) -> FrameProblem {
        FrameProblem(offset: offset, reason: "box does not authenticate (altered, reordered or from another file)")
    }

    /// The problem of a secret box at `offset` in the file whose tag does not verify.
    static func secretBoxProblem(at offset: Int) -> FrameProblem {
        FrameProblem(offset: offset, reason: "secret box does not authenticate")
    }
}
