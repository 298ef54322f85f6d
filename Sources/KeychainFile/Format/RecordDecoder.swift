@_spi(KeychainFileInternals) import KeychainCrypto

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
            delivering: { (piece, _: [NoEntryDigests?]?, _) in entries.append(contentsOf: piece) })
        return Decoded(entries: entries, chainValue: summary.chainValue, boxCount: summary.boxCount)
    }

    /// The record's chain value and box count, once every entry was verified and handed on.
    struct Summary {
        let chainValue: [UInt8]
        let boxCount: Int
    }

    /// Where ``decode(_:expectedSequence:previousChain:context:delivering:)`` hands a record's entries: a piece
    /// of them in order; the ``EntryDigests`` of each put in the piece at its index, where the decoder computed
    /// them beside the decryption (`nil` when it did not: the caller computes them); and the record's entry count.
    typealias Delivery<Digests: EntryDigests> = (_ piece: [DecodedEntry], _ digests: [Digests?]?, _ entryCount: Int) -> Void

    /// ``decode(_:expectedSequence:previousChain:context:)``, handing the entries to `deliver` in pieces as
    /// they are verified, in order, with the record's entry count, rather than collecting them: replay applies
    /// a large record piece by piece and never holds all its entries. Entries handed over before a failure
    /// belong to a record that does not verify; the caller undoes whatever it did with them.
    static func decode<Digests: EntryDigests>(
        _ reader: inout FrameBodyReader, expectedSequence: UInt64, previousChain: [UInt8], context: RecordContext,
        delivering deliver: Delivery<Digests>
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
                let decoded = try WindowedRecordDecoder<Digests>.decodeEntries(
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
