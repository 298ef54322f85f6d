@_spi(KeychainFileInternals) import KeychainCrypto

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
                case .delete(let id), .deletion(let id, _): .delete(id: id)
                case .tombstone(let id, _, _): .delete(id: id)  // never encoded: version 1 keeps no tombstones
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
