@_spi(KeychainFileInternals) import KeychainCrypto

/// Reads every box of a damaged keychain file that still authenticates, past any damage, and reports what it
/// could not read (SPEC.md §17): what a recovering open serves and what salvage keeps.
///
/// Every box carries its own tag and chains from the stored tag of the box before it, so damage to one box
/// costs that box alone. The reader also undoes what a single flipped bit does to the structure around the
/// boxes, always letting tags decide: a damaged length (the stored one, the one its check implies, or any one
/// bit different) is taken only if the box it delimits authenticates; a damaged record kind, sequence number
/// or entry count only if the record's first box authenticates with it; a damaged tag is replaced by the tag
/// computed from its box only if the next box authenticates against that tag, which proves the box authentic.
/// An item whose box is damaged is named when its id can be authenticated: a secret box's associated data holds
/// the id, and a deletion's tag covers it, so every id read elsewhere in the file is tried.
///
/// An item whose damaged latest version can be named is left out rather than served at an older version; one
/// that cannot be named (both of its boxes damaged, or bytes whose structure is lost) is reported, and an
/// update there may leave its item listed at an older version. The whole file is held in memory, and the work
/// that guessing lengths, fields, tags and ids can cost is bounded by a multiple of the file's size.
struct RecoveringReader {
    /// The file, with lengths and tags repaired in place where their box authenticated.
    var bytes: [UInt8]
    let headerLength: Int
    let context: RecordContext
    let initialChain: [UInt8]
    /// What the lock file acknowledged (SPEC.md §16.1): a final record that starts exactly at its end, after a
    /// record with its sequence number and chain value, and does not verify as stored, is a crash remnant, not
    /// applied. `nil` when there is no acknowledgement.
    let acknowledged: Acknowledgement?
    /// The sequence number whose chain value to report (``watchedChain``), for a pinned head.
    let watchedSequence: UInt64?

    var damage: [Damage] = []
    var index = ItemIndex()
    /// The head of the last record whose every box authenticated, and the end of the last record whose frame
    /// could be read.
    var head: Head
    /// The chain value after the authentic record with ``watchedSequence`` (or `C0` for sequence 0), if any.
    var watchedChain: [UInt8]?
    var end: Int
    var boxCount: UInt64 = 0

    /// One box found in the file: where it is and everything its associated data needs (SPEC.md §7.2).
    struct Slot {
        let range: Range<Int>
        /// The previous chain value is the 16 bytes before this offset, or `C0` when it is the header's end.
        let chainEnd: Int
        let record: RecordDecoder.RecordFields
        let entryIndex: UInt32
        let role: BoxRole
        var itemID: ItemID?
        var verified: Bool
    }

    enum Entry {
        case put(attributes: Int, secret: Int?)
        case delete(Int)
    }

    struct Record {
        let frameStart: Int
        let frameEnd: Int
        let fields: RecordDecoder.RecordFields
        var entries: [Entry] = []
        var complete = true
        /// Whether a length, kind, sequence number, entry count, entry kind or tag had to be repaired.
        var repaired = false
    }

    var slots: [Slot] = []
    /// The slots of each record, by record index.
    var slotRanges: [(slots: Range<Int>, record: Int)] = []
    /// Slots whose length or tag was repaired.
    var repairedSlots: Set<Int> = []
    /// The decoded attributes of each attributes slot that authenticated, by slot.
    var attributes: [Int: (id: ItemID, attributes: ItemAttributes)] = [:]
    /// Why an authentic attributes box could not be used, by slot.
    var undecodable: [Int: String] = [:]
    /// The ids of deletions, by slot.
    var deletedIDs: [Int: ItemID] = [:]
    var records: [Record] = []
    /// Bytes that verifications of candidates (lengths, record fields, tags, ids) may still hash: 32 times the
    /// file and 16 MiB more, so that damage cannot make the reader do more than a bounded multiple of reading
    /// the file once, however hostile.
    var budget: Int

    init(
        bytes: [UInt8], headerLength: Int, context: RecordContext, initialChain: [UInt8], acknowledged: Acknowledgement?,
        watching watchedSequence: UInt64? = nil
    ) {
        self.bytes = bytes
        self.headerLength = headerLength
        self.context = context
        self.initialChain = initialChain
        self.acknowledged = acknowledged?.epoch == context.epoch ? acknowledged : nil
        self.watchedSequence = watchedSequence
        if watchedSequence == 0 { watchedChain = initialChain }
        head = Head(epoch: context.epoch, sequence: 0, chainValue: initialChain)
        end = headerLength
        budget = 32 * bytes.count + (16 << 20)
    }

    // MARK: Reading

    mutating func run() {
        var position = headerLength
        var expectedSequence: UInt64 = 1
        while position < bytes.count {
            if let record = readRecord(at: position, expectedSequence: expectedSequence) {
                records.append(record)
                position = record.frameEnd
                end = position
                expectedSequence = record.fields.sequence &+ 1
                continue
            }
            let next = nextPlausibleFrame(after: position, minimumSequence: expectedSequence)
            let stop = next ?? bytes.count
            if next == nil, isAcknowledgedEnd(position) {
                damage.append(Damage(
                    offset: position, loss: .crashRemnant(byteCount: stop - position), reason: "an incomplete final record"))
            } else {
                damage.append(Damage(
                    offset: position, loss: .region(byteCount: stop - position), reason: "no readable record frame here"))
            }
            position = stop
            if let next, let sequence = u64(next + 9) { expectedSequence = sequence }
        }
        repairTags()
        identifyDamagedItems()
        applyRecords()
        boxCount = UInt64(slots.count)
    }

    /// Whether `offset` is the end the lock file acknowledged, reached after a record with the acknowledged
    /// sequence number and chain value (the stored tag before `offset`, repaired where a later box confirmed it).
    func isAcknowledgedEnd(_ offset: Int) -> Bool {
        guard let acknowledged, offset == acknowledged.end else { return false }
        if acknowledged.sequence == 0 { return offset == headerLength && acknowledged.chainValue == initialChain }
        guard let previous = records.last(where: { $0.frameEnd == offset }), previous.fields.sequence == acknowledged.sequence,
              offset >= 16 else { return false }
        return Array(bytes[(offset - 16)..<offset]) == acknowledged.chainValue
    }

    func u32(_ offset: Int) -> UInt32? {
        guard offset >= 0, offset + 4 <= bytes.count else { return nil }
        return bytes[offset..<(offset + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    func u64(_ offset: Int) -> UInt64? {
        guard offset >= 0, offset + 8 <= bytes.count else { return nil }
        return bytes[offset..<(offset + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    mutating func writeU32(_ value: UInt32, at offset: Int) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
    }

    /// The record whose frame starts at `start`, with its boxes found and checked; `nil` when no frame can be
    /// read there.
    mutating func readRecord(at start: Int, expectedSequence: UInt64) -> Record? {
        guard let length = u32(start), let check = u32(start + 4) else { return nil }
        var lengths = [length]
        if check != ~length { lengths.append(~check) }
        lengths = lengths.filter {
            $0 >= Format.minimumBodyLength && $0 <= Format.maximumBodyLength && start + Format.frameHeaderSize + Int($0) <= bytes.count
        }
        // Of two lengths, the one after which the file ends or another plausible frame starts is tried first.
        if lengths.count == 2, !framePlausiblyEnds(at: start + Format.frameHeaderSize + Int(lengths[0])),
           framePlausiblyEnds(at: start + Format.frameHeaderSize + Int(lengths[1])) {
            lengths.swapAt(0, 1)
        }
        var fallback: (frameEnd: Int, fields: (fields: RecordDecoder.RecordFields, payloadStart: Int, firstBoxVerifies: Bool))? = nil
        for candidate in lengths {
            let frameEnd = start + Format.frameHeaderSize + Int(candidate)
            guard let fields = recordFields(frameStart: start, frameEnd: frameEnd, expectedSequence: expectedSequence) else { continue }
            if fields.firstBoxVerifies {
                let repaired = candidate != length || check != ~length
                if repaired {
                    writeU32(candidate, at: start)
                    writeU32(~candidate, at: start + 4)
                }
                var record = readEntries(frameStart: start, frameEnd: frameEnd, fields: fields)
                record.repaired = record.repaired || repaired
                return record
            }
            if fallback == nil { fallback = (frameEnd, fields) }
        }
        guard let fallback else { return nil }
        return readEntries(frameStart: start, frameEnd: fallback.frameEnd, fields: fallback.fields)
    }

    /// The record's kind, sequence number and entry count: those stored, unless other values (another kind, the
    /// expected sequence number, an entry count one bit away) make the record's first box authenticate.
    mutating func recordFields(
        frameStart: Int, frameEnd: Int, expectedSequence: UInt64
    ) -> (fields: RecordDecoder.RecordFields, payloadStart: Int, firstBoxVerifies: Bool)? {
        guard let storedSequence = u64(frameStart + 9) else { return nil }
        let storedKind = bytes[frameStart + 8]
        var kinds: [RecordKind] = RecordKind(rawValue: storedKind).map { [$0] } ?? []
        kinds += [RecordKind.put, .delete, .transaction].filter { $0.rawValue != storedKind }
        let sequences = storedSequence == expectedSequence ? [storedSequence] : [storedSequence, expectedSequence]
        var first: (fields: RecordDecoder.RecordFields, payloadStart: Int, firstBoxVerifies: Bool)? = nil
        for kind in kinds {
            let payloadStart = frameStart + 17 + (kind == .transaction ? 4 : 0)
            guard payloadStart < frameEnd else { continue }
            var counts: [UInt32] = [1]
            if kind == .transaction {
                guard let stored = u32(frameStart + 17) else { continue }
                counts = [stored] + (0..<32).map { stored ^ (1 << $0) }
                counts = counts.filter { $0 >= 1 && $0 <= Format.maximumTransactionEntries }
            }
            for sequence in sequences {
                for count in counts {
                    let fields = RecordDecoder.RecordFields(sequence: sequence, kind: kind, entryCount: count, context: context)
                    if first == nil, kind.rawValue == storedKind, sequence == storedSequence { first = (fields, payloadStart, false) }
                    let isStored = kind.rawValue == storedKind && sequence == storedSequence && count == counts.first
                    if firstBoxVerifies(fields, payloadStart: payloadStart, frameStart: frameStart, frameEnd: frameEnd, candidate: !isStored) {
                        return (fields, payloadStart, true)
                    }
                    if budget <= 0 { return first }
                }
            }
        }
        return first
    }

    /// Whether the first box of a record with `fields` authenticates as stored.
    mutating func firstBoxVerifies(
        _ fields: RecordDecoder.RecordFields, payloadStart: Int, frameStart: Int, frameEnd: Int, candidate: Bool
    ) -> Bool {
        var roles: [BoxRole]
        var fieldStart = payloadStart
        switch fields.kind {
        case .put: roles = [.attributes]
        case .delete: roles = [.deletion]
        case .transaction:
            guard payloadStart < frameEnd else { return false }
            switch bytes[payloadStart] {
            case 1: roles = [.attributes]
            case 2: roles = [.deletion]
            default: roles = [.attributes, .deletion]
            }
            fieldStart += 1
        }
        guard let length = u32(fieldStart), length >= Format.boxOverhead, fieldStart + 4 + Int(length) <= frameEnd else { return false }
        let range = (fieldStart + 4)..<(fieldStart + 4 + Int(length))
        for role in roles {
            let slot = Slot(range: range, chainEnd: frameStart, record: fields, entryIndex: 0, role: role, itemID: nil, verified: false)
            if verify(slot, candidate: candidate || roles.count > 1) { return true }
        }
        return false
    }

    /// Finds the boxes of the record framed `frameStart ..< frameEnd`, checking each.
    mutating func readEntries(
        frameStart: Int, frameEnd: Int, fields header: (fields: RecordDecoder.RecordFields, payloadStart: Int, firstBoxVerifies: Bool)
    ) -> Record {
        let fields = header.fields
        var record = Record(frameStart: frameStart, frameEnd: frameEnd, fields: fields)
        record.repaired = bytes[frameStart + 8] != fields.kind.rawValue || u64(frameStart + 9) != fields.sequence
            || (fields.kind == .transaction && u32(frameStart + 17) != fields.entryCount)
        let firstSlot = slots.count
        defer {
            // Lengths and tags repaired in place show as slots whose stored bytes changed; tags are repaired later.
            if slots.count > firstSlot { slotRanges.append((firstSlot..<slots.count, records.count)) }
        }
        var position = header.payloadStart
        var chainEnd = frameStart
        for entryIndex in 0..<fields.entryCount {
            let entryStart = position
            var kind: UInt8 = fields.kind == .put ? 1 : 2
            if fields.kind == .transaction {
                guard position < frameEnd else { record.complete = false; break }
                kind = bytes[position]
                position += 1
                if kind != 1 && kind != 2 {
                    // One bit from either kind: the one whose first box authenticates, else give up on the record.
                    let asPut = boxSlot(at: position, limit: frameEnd, chainEnd: chainEnd, fields, UInt32(entryIndex), .attributes, nil)
                    let asDeletion = boxSlot(at: position, limit: frameEnd, chainEnd: chainEnd, fields, UInt32(entryIndex), .deletion, nil)
                    if asPut?.verified == true { kind = 1 } else if asDeletion?.verified == true { kind = 2 } else {
                        record.complete = false
                        damage.append(Damage(offset: entryStart, loss: .region(byteCount: frameEnd - entryStart), reason: "unknown entry kind \(kind)"))
                        break
                    }
                    bytes[entryStart] = kind
                    record.repaired = true
                }
            }
            if kind == 1 {
                guard let attributesSlot = boxSlot(
                    at: position, limit: frameEnd, chainEnd: chainEnd, fields, UInt32(entryIndex), .attributes, nil) else {
                    record.complete = false
                    damage.append(Damage(offset: entryStart, loss: .region(byteCount: frameEnd - entryStart), reason: "an unreadable box length"))
                    break
                }
                let attributesIndex = append(attributesSlot)
                position = attributesSlot.range.upperBound
                guard let secretSlot = boxSlot(
                    at: position, limit: frameEnd, chainEnd: position, fields, UInt32(entryIndex), .secret,
                    attributes[attributesIndex]?.id) else {
                    record.entries.append(.put(attributes: attributesIndex, secret: nil))
                    record.complete = false
                    damage.append(Damage(offset: position, loss: .region(byteCount: frameEnd - position), reason: "an unreadable box length"))
                    break
                }
                let secretIndex = append(secretSlot)
                record.entries.append(.put(attributes: attributesIndex, secret: secretIndex))
                position = secretSlot.range.upperBound
            } else {
                guard let slot = boxSlot(at: position, limit: frameEnd, chainEnd: chainEnd, fields, UInt32(entryIndex), .deletion, nil) else {
                    record.complete = false
                    damage.append(Damage(offset: entryStart, loss: .region(byteCount: frameEnd - entryStart), reason: "an unreadable box length"))
                    break
                }
                record.entries.append(.delete(append(slot)))
                position = slot.range.upperBound
            }
            chainEnd = position
        }
        if record.complete && position != frameEnd {
            damage.append(Damage(offset: position, loss: .region(byteCount: frameEnd - position), reason: "unexpected bytes after the last box"))
        }
        return record
    }

    /// Records a slot, decoding an authentic attributes or deletion box; returns its index.
    mutating func append(_ slot: Slot) -> Int {
        slots.append(slot)
        let index = slots.count - 1
        if slot.verified { decode(index) }
        return index
    }

    /// Decodes the authentic attributes or deletion box of slot `index`.
    mutating func decode(_ index: Int) {
        let slot = slots[index]
        let chain = previousChain(slot)
        switch slot.role {
        case .attributes:
            do throws(FrameProblem) {
                attributes[index] = try RecordDecoder.openAttributesBox(
                    bytes, slot.range, at: slot.range.lowerBound, record: slot.record, entryIndex: slot.entryIndex, previousChain: chain)
            } catch {
                undecodable[index] = error.reason
            }
        case .deletion:
            do throws(FrameProblem) {
                deletedIDs[index] = try RecordDecoder.openDeletionBox(
                    bytes, slot.range, at: slot.range.lowerBound, record: slot.record, entryIndex: slot.entryIndex, previousChain: chain)
            } catch {
                undecodable[index] = error.reason
            }
        case .secret:
            break
        }
    }

    /// The box field (`u32` length, box) at `position`, checked: its stored length, or one a bit away whose box
    /// authenticates (repaired in place). `nil` when no length fits before `limit`.
    mutating func boxSlot(
        at position: Int, limit: Int, chainEnd: Int, _ fields: RecordDecoder.RecordFields, _ entryIndex: UInt32, _ role: BoxRole,
        _ itemID: ItemID?
    ) -> Slot? {
        guard let stored = u32(position), position + 4 <= limit else { return nil }
        func slot(_ length: UInt32) -> Slot? {
            guard length >= Format.boxOverhead, position + 4 + Int(length) <= limit else { return nil }
            return Slot(
                range: (position + 4)..<(position + 4 + Int(length)), chainEnd: chainEnd, record: fields, entryIndex: entryIndex,
                role: role, itemID: itemID, verified: false)
        }
        if var candidate = slot(stored), verify(candidate) {
            candidate.verified = true
            return candidate
        }
        // A secret box of an unknown item cannot be checked: its length is taken as stored.
        if role != .secret || itemID != nil {
            for bit in 0..<32 {
                let length = stored ^ (1 << bit)
                if var candidate = slot(length), verify(candidate, candidate: true) {
                    writeU32(length, at: position)
                    candidate.verified = true
                    repairedSlots.insert(slots.count)
                    return candidate
                }
            }
        }
        return slot(stored)
    }
}
