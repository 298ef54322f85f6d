@_spi(KeychainFileInternals) import KeychainCrypto

/// Opens version 2 records (`RecordV2`) and verifies every box: each page is decrypted, and each secret box must
/// have the digest its page names and a tag that verifies for its item (checked, not decrypted).
///
/// Decoding has two steps so that a large log opens on several cores: `scan` walks a record's frame and box
/// fields (no cryptography; it finds every page and the previous chain value each is sealed with, which is the
/// tag of the page before it, read from the bytes), and `openPage` verifies one page and its secrets, in any
/// order. `decode` does both for one record.
///
/// ```swift
/// let record = try RecordV2Decoder.decode(bytes, at: 0, previousChain: c0, keys: keys)
/// record.entries; record.chain; record.end
/// ```
enum RecordV2Decoder {
    /// A record's frame, walked.
    struct Scanned: Sendable {
        let start: Int
        let end: Int
        let kind: RecordV2.Kind
        let sequence: UInt64
        let part: UInt32
        let entryCount: UInt32
        let boxCount: UInt32
        let pages: [Page]
        /// The offset of the last page's tag: the record's chain value (empty for a frame without pages, which
        /// `scan` never returns).
        var chainRange: Range<Int> {
            guard let last = pages.last, last.box.count >= 16 else { return end..<end }
            return (last.box.upperBound - 16)..<last.box.upperBound
        }
    }

    /// One page and the secret boxes before it.
    struct Page: Sendable {
        let box: Range<Int>
        let boxIndex: UInt32
        let secrets: [Range<Int>]
        /// The previous page's tag in the same record; nil for the first page (the previous record's chain).
        let previousTag: Range<Int>?
    }

    /// One record: its verified entries, its chain value and where it ends.
    struct Record: Sendable {
        let kind: RecordV2.Kind
        let sequence: UInt64
        let part: UInt32
        let entries: [DecodedEntryV2]
        let chain: [UInt8]
        let end: Int
    }

    static func decode(_ bytes: [UInt8], at offset: Int, previousChain: [UInt8], keys: RecordKeysV2) throws(KeychainError) -> Record {
        let scanned = try scan(bytes, at: offset)
        var entries: [DecodedEntryV2] = []
        entries.reserveCapacity(Int(scanned.entryCount))
        for page in scanned.pages {
            entries += try openPage(page, of: scanned, in: bytes, previousChain: previousChain, keys: keys)
        }
        guard entries.count == Int(scanned.entryCount) else {
            throw .corrupted(offset: offset + 21, reason: "the record declares \(scanned.entryCount) entries; its pages hold \(entries.count)")
        }
        return Record(
            kind: scanned.kind, sequence: scanned.sequence, part: scanned.part, entries: entries,
            chain: Array(bytes[scanned.chainRange]), end: scanned.end)
    }

    /// Walks the frame at `offset`: lengths, counts and box fields, every length checked before use; then the
    /// frame check, and only then kind, key ids and roles are read for what they say.
    ///
    /// - Throws: `.corrupted` at this record for a frame that does not hold together or whose frame check fails
    ///   (damage in the frame or a box field's header), or for an `offset` outside `bytes`;
    ///   `.unsupportedFeature` for a record kind, key id or box role this version does not know, in a frame
    ///   whose check passed (a newer writer's, not damage: nothing is to be repaired).
    static func scan(_ bytes: [UInt8], at offset: Int) throws(KeychainError) -> Scanned {
        func corrupted(_ at: Int, _ reason: String) -> KeychainError { .corrupted(offset: at, reason: "record: \(reason)") }
        func unsupported(_ at: Int, _ reason: String) -> KeychainError { .unsupportedFeature(offset: at, reason: "record: \(reason)") }
        guard offset >= 0, offset <= bytes.count else {
            throw corrupted(max(0, offset), "offset \(offset) is outside the \(bytes.count) bytes of the log")
        }
        var reader = ByteReader(bytes, range: offset..<bytes.count)
        do {
            let length = Int(try reader.readUInt32("body length"))
            let check = try reader.readUInt32("length check")
            guard UInt32(length) ^ 0xFFFF_FFFF == check else { throw corrupted(offset, "the length check does not match the body length") }
            guard length >= RecordV2.minimumBodyLength, length <= RecordV2.maximumBodyLength else {
                throw corrupted(offset, "body length \(length) is outside \(RecordV2.minimumBodyLength) … \(RecordV2.maximumBodyLength)")
            }
            let end = offset + 8 + length
            guard end <= bytes.count else { throw corrupted(offset, "the body runs \(end - bytes.count) bytes past the end of the log") }
            reader = ByteReader(bytes, range: (offset + 8)..<end)
            let rawKind = try reader.readUInt8("kind")
            let sequence = try reader.readUInt64("sequence")
            let part = try reader.readUInt32("part")
            let entryCount = try reader.readUInt32("entry count")
            let boxCount = try reader.readUInt32("box count")
            let frameCheck = try reader.readRange(RecordV2.frameCheckSize, "frame check")
            // Every entry takes at least 25 bytes of some page's plaintext (a deletion), so a count the body
            // cannot hold is refused before anything is sized by it.
            guard entryCount >= 1, Int(entryCount) <= length / 25 else {
                throw corrupted(offset + 21, "entry count \(entryCount) does not fit a body of \(length) bytes")
            }
            guard boxCount >= 1, Int(boxCount) <= length / (RecordV2.boxFieldHeaderSize + 28) else {
                throw corrupted(offset + 25, "box count \(boxCount) does not fit a body of \(length) bytes")
            }
            var boxes: [(keyID: UInt8, role: UInt8, box: Range<Int>)] = []
            boxes.reserveCapacity(Int(boxCount))
            var fields: [UInt8] = []
            fields.reserveCapacity(Int(boxCount) * RecordV2.boxFieldHeaderSize)
            for index in 0..<boxCount {
                let field = reader.offset
                let keyID = try reader.readUInt8("key id")
                let role = try reader.readUInt8("box role")
                let boxLength = Int(try reader.readUInt32("box length"))
                guard boxLength >= 28 else { throw corrupted(field + 2, "box \(index) is \(boxLength) bytes, less than 28") }
                boxes.append((keyID, role, try reader.readRange(boxLength, "box \(index)")))
                fields += bytes[field..<(field + RecordV2.boxFieldHeaderSize)]
            }
            guard reader.isAtEnd else { throw corrupted(reader.offset, "\(reader.remaining) bytes after the last box") }
            guard RecordV2.frameCheck(frame: bytes[offset..<(offset + RecordV2.frameCheckOffset)], boxFields: fields)
                .elementsEqual(bytes[frameCheck])
            else {
                throw corrupted(offset, "the frame check does not match: the record's frame or a box field's header is damaged")
            }
            // The frame check passed: what follows is as written, by a writer that may know more than this one.
            guard let kind = RecordV2.Kind(rawValue: rawKind) else {
                throw unsupported(offset + 8, "record kind \(rawKind) (this version reads kinds 1 and 3)")
            }
            var pages: [Page] = []
            var secrets: [Range<Int>] = []
            var previousTag: Range<Int>? = nil
            for (index, field) in boxes.enumerated() {
                let at = field.box.lowerBound - RecordV2.boxFieldHeaderSize
                guard field.keyID == 0 else {
                    throw unsupported(at, "box \(index) is sealed under key id \(field.keyID) (this version reads key id 0 only)")
                }
                guard let role = RecordV2.Role(rawValue: field.role) else {
                    throw unsupported(at + 1, "box \(index) has role \(field.role) (this version reads roles 1 and 2)")
                }
                switch role {
                case .secret:
                    secrets.append(field.box)
                case .page:
                    pages.append(Page(box: field.box, boxIndex: UInt32(index), secrets: secrets, previousTag: previousTag))
                    secrets = []
                    previousTag = (field.box.upperBound - 16)..<field.box.upperBound
                }
            }
            guard secrets.isEmpty, !pages.isEmpty else { throw corrupted(offset, "the record does not end with a page") }
            return Scanned(
                start: offset, end: end, kind: kind, sequence: sequence, part: part, entryCount: entryCount,
                boxCount: boxCount, pages: pages)
        } catch let error as KeychainError {
            throw error
        } catch let underflow as ByteReader.Underflow {
            throw corrupted(underflow.offset, "truncated \(underflow.field)")
        } catch {
            throw corrupted(offset, "\(error)")
        }
    }

    /// Verifies and decodes one page and checks its secret boxes.
    ///
    /// - Parameter previousChain: the chain value before the record (used by its first page).
    /// - Throws: `.corrupted` when the page or a secret box does not authenticate, or the page's entries do
    ///   not hold together; `.unsupportedFeature` for a page that authenticates in another page encoding.
    static func openPage(
        _ page: Page, of record: Scanned, in bytes: [UInt8], previousChain: [UInt8], keys: RecordKeysV2
    ) throws(KeychainError) -> [DecodedEntryV2] {
        try checkRanges(of: page, in: bytes)
        var plaintext = [UInt8](repeating: 0, count: page.box.count - 28)
        let parsed = try plaintext.withUnsafeMutableBytes { out in
            Result { () throws(KeychainError) -> [PageEntryV2] in
                try decrypt(page, of: record, in: bytes, previousChain: previousChain, keys: keys, into: out)
                return try parsePage(UnsafeRawBufferPointer(out), page: page, in: bytes, keys: keys)
            }
        }.get()
        return plaintext.withUnsafeBytes { plaintext in
            parsed.map { entry in
                switch entry {
                case .put(let id, let itemClass, let count, let attributes, let box):
                    let kept = AttributeCoding.keep((id, itemClass, count), of: UnsafeRawBufferPointer(rebasing: plaintext[attributes]))
                    return .put(id: id, attributes: kept.attributes, secretBox: box)
                case .delete(let id, let time): return .delete(id: id, time: time)
                case .tombstone(let id, let time): return .tombstone(id: id, time: time)
                }
            }
        }
    }

    /// Checks that the ranges of `page`, which may come from another scan than of `bytes`, lie within them.
    ///
    /// - Throws: `.corrupted` at the page when they do not, or are too short.
    static func checkRanges(of page: Page, in bytes: [UInt8]) throws(KeychainError) {
        guard page.box.count >= 28, fits(page.box, in: bytes), page.secrets.allSatisfy({ $0.count >= 28 && fits($0, in: bytes) }),
              page.previousTag.map({ $0.count == 16 && fits($0, in: bytes) }) ?? true
        else {
            throw .corrupted(offset: max(0, page.box.lowerBound), reason: "page (box \(page.boxIndex)): its box, its secrets or the tag before it lie outside the \(bytes.count) bytes given, or are too short")
        }
    }

    /// Checks that `page` (whose ranges ``checkRanges(of:in:)`` checked) authenticates, and
    /// decrypts it into `out`, which holds exactly its plaintext (`page.box.count - 28` bytes).
    ///
    /// - Throws: `.corrupted` when the page does not authenticate.
    static func decrypt(
        _ page: Page, of record: Scanned, in bytes: [UInt8], previousChain: [UInt8], keys: RecordKeysV2, into out: UnsafeMutableRawBufferPointer
    ) throws(KeychainError) {
        let place = BoxAADV2.PagePlace(
            sequence: record.sequence, kind: record.kind.rawValue, part: record.part, entryCount: record.entryCount,
            boxCount: record.boxCount, boxIndex: page.boxIndex, keyID: 0)
        let aad = page.previousTag.map {
            BoxAADV2.page(fileID: keys.fileID, epoch: keys.epoch, place: place, previousChain: bytes[$0])
        } ?? BoxAADV2.page(fileID: keys.fileID, epoch: keys.epoch, place: place, previousChain: previousChain)
        let opened = bytes.withUnsafeBytes { all in
            aad.withUnsafeBytes { aad in
                (try? AES.GCM.open(UnsafeRawBufferPointer(rebasing: all[page.box]), using: keys.page, authenticating: aad, into: out)) != nil
            }
        }
        guard opened else {
            throw .corrupted(offset: page.box.lowerBound, reason: "page (box \(page.boxIndex) of the record at \(record.start)) does not authenticate")
        }
    }

    /// Walks the entries of a page's `plaintext`, checking each as it goes: the page encoding, every length, each
    /// put's attributes (``AttributeCoding/check(_:)``, nothing copied) and secret box — its size and the digest
    /// the entry names, then its tag, eight boxes at a time — and that the puts name the page's secret boxes
    /// exactly. The first problem, in that order, is thrown.
    ///
    /// - Throws: `.corrupted` at the page, or at a secret box that is not the one named or does not
    ///   authenticate; `.unsupportedFeature` for another page encoding.
    static func parsePage(
        _ plaintext: UnsafeRawBufferPointer, page: Page, in bytes: [UInt8], keys: RecordKeysV2
    ) throws(KeychainError) -> [PageEntryV2] {
        let where_ = page.box.lowerBound
        func corrupted(_ reason: String) -> KeychainError { .corrupted(offset: where_, reason: "page (box \(page.boxIndex)): \(reason)") }
        var reader = RawByteReader(plaintext)
        var entries: [PageEntryV2] = []
        var secretIndex = 0
        // Secret boxes are checked eight at a time: the cipher computes eight E(J0) blocks in one run.
        var pending: [(box: Range<Int>, id: ItemID)] = []
        pending.reserveCapacity(AES.GCM.tagBatchLimit)
        do {
            // The page authenticated: another version is a newer writer's, not damage.
            let version = try reader.readUInt8("version")
            guard version == RecordV2.pageEncodingVersion else {
                throw KeychainError.unsupportedFeature(
                    offset: where_, reason: "page (box \(page.boxIndex)) is in page encoding version \(version); this version reads \(RecordV2.pageEncodingVersion)")
            }
            let count = Int(try reader.readUInt16("entry count"))
            guard count >= 1 else { throw corrupted("no entries") }
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let kind = try reader.readUInt8("entry kind")
                switch kind {
                case 1:
                    let attributeLength = Int(try reader.readUInt32("attributes length"))
                    let range = try reader.readRange(attributeLength, "attributes")
                    let checked: (id: ItemID, itemClass: ItemClass, count: Int)
                    do throws(AttributeDecodingError) {
                        checked = try AttributeCoding.check(UnsafeRawBufferPointer(rebasing: plaintext[range]))
                    } catch {
                        throw corrupted("\(error)")
                    }
                    let secretLength = Int(try reader.readUInt32("secret length"))
                    guard secretLength <= RecordV2.maximumSecretSize else {
                        throw corrupted("the secret of item \(checked.id) is \(secretLength) bytes; a secret is at most 1 MiB")
                    }
                    let digest = try reader.readRange(RecordV2.secretBoxDigestSize, "secret box digest")
                    guard secretIndex < page.secrets.count else { throw corrupted("more puts than secret boxes before the page") }
                    let box = page.secrets[secretIndex]
                    secretIndex += 1
                    guard box.count == secretLength + 28 else {
                        throw corrupted("the secret of item \(checked.id) is \(box.count - 28) bytes; its page says \(secretLength)")
                    }
                    let computed = bytes.withUnsafeBytes { RecordV2.secretBoxDigest(UnsafeRawBufferPointer(rebasing: $0[box])) }
                    guard computed == UnsafeRawBufferPointer(rebasing: plaintext[digest]) else {
                        throw KeychainError.corrupted(
                            offset: box.lowerBound,
                            reason: "the secret box of item \(checked.id) is not the one its page (box \(page.boxIndex)) names: its digest differs")
                    }
                    pending.append((box, checked.id))
                    if pending.count == AES.GCM.tagBatchLimit {
                        try verifySecrets(pending, in: bytes, keys: keys)
                        pending.removeAll(keepingCapacity: true)
                    }
                    entries.append(.put(id: checked.id, itemClass: checked.itemClass, attributeCount: checked.count, attributes: range, secretBox: box))
                case 2, 3:
                    let idRange = try reader.readRange(16, "item id")
                    let id = ItemID(uncheckedPrefixOf: UnsafeRawBufferPointer(rebasing: plaintext[idRange]))
                    let time = Int64(bitPattern: try reader.readUInt64("time"))
                    entries.append(kind == 2 ? .delete(id: id, time: time) : .tombstone(id: id, time: time))
                default:
                    throw corrupted("unknown entry kind \(kind)")
                }
            }
            guard reader.isAtEnd else { throw corrupted("\(reader.remaining) bytes after the last entry") }
            guard secretIndex == page.secrets.count else { throw corrupted("\(page.secrets.count - secretIndex) secret boxes that no entry names") }
            if !pending.isEmpty { try verifySecrets(pending, in: bytes, keys: keys) }
        } catch let error as KeychainError {
            throw error
        } catch let underflow as ByteReader.Underflow {
            throw corrupted("truncated \(underflow.field) at byte \(underflow.offset) of the plaintext")
        } catch {
            throw corrupted("\(error)")
        }
        return entries
    }

    /// Checks secret boxes: each one's digest against the one its page names, when `digests` are given, then
    /// their tags, eight in one run of the cipher, each as `AES.GCM.verify` would.
    ///
    /// - Parameter digests: for each box, the digest its page names (`RecordV2.secretBoxDigest`); without them
    ///   only the tags are checked, which binds a box to its item but not to its page for whoever holds the
    ///   secret key.
    /// - Throws: `.corrupted` at the first box whose digest or tag does not verify, or that does not lie within
    ///   `bytes`.
    static func verifySecrets(
        _ boxes: [(box: Range<Int>, id: ItemID)], in bytes: [UInt8], keys: RecordKeysV2, digests: [[UInt8]]? = nil
    ) throws(KeychainError) {
        for entry in boxes where entry.box.count < 28 || !fits(entry.box, in: bytes) {
            throw .corrupted(offset: max(0, entry.box.lowerBound), reason: "the secret box of item \(entry.id) lies outside the \(bytes.count) bytes given, or is shorter than 28 bytes")
        }
        if let digests {
            for (index, entry) in boxes.enumerated() where index >= digests.count || !(RecordV2.secretBoxDigest(bytes[entry.box]) == digests[index]) {
                throw .corrupted(offset: entry.box.lowerBound, reason: "the secret box of item \(entry.id) is not the one its page names (its digest differs)")
            }
        }
        // The cipher takes at most eight at a time.
        guard boxes.count <= AES.GCM.tagBatchLimit else {
            for start in stride(from: 0, to: boxes.count, by: AES.GCM.tagBatchLimit) {
                try verifySecrets(Array(boxes[start..<min(start + AES.GCM.tagBatchLimit, boxes.count)]), in: bytes, keys: keys)
            }
            return
        }
        guard !boxes.isEmpty else { return }
        let size = BoxAADV2.secretSize
        var aads = [UInt8](repeating: 0, count: size * boxes.count)
        for (index, entry) in boxes.enumerated() {
            BoxAADV2.writeSecret(fileID: keys.fileID, keyID: 0, itemID: entry.id, into: &aads, at: index * size)
        }
        let failing = bytes.withUnsafeBytes { all in
            aads.withUnsafeBytes { aad in
                AES.GCM.firstFailingTag(
                    count: boxes.count, using: keys.secret,
                    box: { UnsafeRawBufferPointer(rebasing: all[boxes[$0].box]) },
                    authenticating: { UnsafeRawBufferPointer(rebasing: aad[(size * $0)..<(size * ($0 + 1))]) })
            }
        }
        if let failing {
            throw .corrupted(offset: boxes[failing].box.lowerBound, reason: "the secret box of item \(boxes[failing].id) does not authenticate")
        }
    }
}

extension RecordV2Decoder {
    /// Decrypts a put's secret from its box (which `decode` verified; this checks its tag again, as the bytes
    /// may have been read anew).
    ///
    /// - Throws: `.corrupted` if the box does not authenticate for `id`, or does not lie within `bytes` (a read
    ///   shorter than the one it was found in).
    static func openSecret(_ box: Range<Int>, of id: ItemID, in bytes: [UInt8], keys: RecordKeysV2) throws(KeychainError) -> [UInt8] {
        guard box.count >= 28, fits(box, in: bytes) else {
            throw .corrupted(offset: max(0, box.lowerBound), reason: "the secret box of item \(id) (\(box)) lies outside the \(bytes.count) bytes given, or is shorter than 28 bytes")
        }
        let aad = BoxAADV2.secret(fileID: keys.fileID, keyID: 0, itemID: id)
        var secret = [UInt8](repeating: 0, count: box.count - 28)
        let opened = bytes.withUnsafeBytes { all in
            aad.withUnsafeBytes { aad in
                secret.withUnsafeMutableBytes { out in
                    (try? AES.GCM.open(UnsafeRawBufferPointer(rebasing: all[box]), using: keys.secret, authenticating: aad, into: out)) != nil
                }
            }
        }
        guard opened else { throw .corrupted(offset: box.lowerBound, reason: "the secret box of item \(id) does not authenticate") }
        return secret
    }

    /// Whether `range` lies within `bytes` (a `Range` is never reversed, but may be negative or past the end).
    static func fits(_ range: Range<Int>, in bytes: [UInt8]) -> Bool {
        range.lowerBound >= 0 && range.upperBound <= bytes.count
    }
}
