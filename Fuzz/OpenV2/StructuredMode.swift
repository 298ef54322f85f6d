@testable import KeychainFile

/// Mode (b): the input describes records; ``V2FileWriter`` seals them under keys the harness knows and commits
/// them, and the file is opened with the raw key (every check) and the one-iteration password (reads).
///
/// Layout (every field is read with ``FuzzInput``, so a short input still decodes):
///
///     u8 flags              bit 0: u8 c follows: compact through Keychain before record c % 17 (after the
///                                  last record if there are fewer), then go on appending to the new epoch
///                           bit 1: a record header 0xFF ends the records; damage operations follow
///                           bit 2: u8 split follows: also open the file as it stood before record
///                                  split % (records + 1) and catch up with the rest (``RefreshChecks``;
///                                  undamaged files only, and not across the compaction)
///     records, while input remains (at most 16):
///       u8 header           bits 0-2: 1 + n entries; bit 3: a transaction part (kind 3), else a commit;
///                           bit 4: u8 part number follows (else the one due); bit 5: u8 follows, added to the
///                           sequence number due; bit 6: u8 page encoding version follows (else 1)
///       entries, each starting with u8 op:
///         op % 4 == 0 or 1  structured put: u8 item (id from a pool of 8), u8 class, u8 count (% 24), then
///                           per attribute: u8 selector — below the catalogue size, that attribute with its
///                           own type; otherwise u16 tag and u8 type follow — then u8 length and the value.
///                           op bit 2: add valid creationDate and modificationDate when missing.
///                           op bit 3: keep the attributes in the given order (else sorted, repeats dropped).
///         op % 4 == 2       deletion: u8 item; op bit 4: a tombstone instead; op bit 5: u64 time follows
///                           (else u16 days since 1970); op bit 3: u8 length and that many bytes, cut or
///                           padded with zeros to 16, replace the item id
///         op % 4 == 3       raw put: u16 length and the attributes plaintext as it is
///       after a put: the secret, u8 length (op bit 5: u16 length) and its bytes; op bit 6: u32 follows, the
///       secret length the page names; op bit 7: the secret box digest the page names has its first byte flipped
///     damage operations (flag bit 1), to the end, each u8 op % 5 and its operands: 0 flip (u24 offset, u8
///     mask), 1 zero (u24 offset, u16 length), 2 cut (u16: bytes off the end), 3 append (u8 length n, n bytes:
///     a remnant past the log), 4 copy one commit slot over the other (u8: which). Offsets are modulo the size.
enum StructuredMode {
    static func run(_ bytes: [UInt8]) {
        var input = FuzzInput(bytes)
        let flags = input.byte()
        let compactBefore = flags & 1 != 0 ? Int(input.byte()) % 17 : nil
        let split = flags & 4 != 0 ? Int(input.byte()) : nil
        var writer = V2FileWriter()
        var records = 0
        var compactedAt: Int? = nil
        while !input.isAtEnd && records < 16 {
            let header = input.byte()
            if header == 0xFF && flags & 2 != 0 { break }
            if compactBefore == records {
                writer.compact()
                compactedAt = records
            }
            writer.snapshot()
            let part = header & 0x10 != 0 ? UInt32(input.byte()) : nil
            let skew = header & 0x20 != 0 ? UInt64(input.byte()) : 0
            let pageVersion = header & 0x40 != 0 ? input.byte() : RecordV2.pageEncodingVersion
            var entries: [V2FileWriter.Entry] = []
            for _ in 0...(Int(header) & 7) { entries.append(entry(&input)) }
            writer.append(entries, kind: header & 8 != 0 ? .part : .commit, part: part, sequenceSkew: skew, pageVersion: pageVersion)
            records += 1
        }
        if compactBefore != nil && compactedAt == nil {
            writer.compact()
            compactedAt = records
        }
        writer.snapshot()
        var image = writer.bytes
        var damaged = false
        if flags & 2 != 0 {
            while !input.isAtEnd {
                damaged = true
                damage(&image, &input)
            }
        }
        OpenedKeychainChecks<FormatV2Checks>.runSealed(image)
        if let split, !damaged {
            let at = split % (records + 1)
            if compactedAt.map({ $0 <= at }) ?? true {
                RefreshChecks<FormatV2Checks>.run(from: writer.snapshots[at], to: image, credential: FuzzCredentials.key)
            }
        }
    }

    /// One damage operation on the file's bytes.
    static func damage(_ image: inout [UInt8], _ input: inout FuzzInput) {
        let size = max(image.count, 1)
        switch input.byte() % 5 {
        case 0:
            let offset = input.uint24() % size
            let mask = max(1, input.byte())
            if offset < image.count { image[offset] ^= mask }
        case 1:
            let offset = input.uint24() % size
            let end = min(image.count, offset + Int(input.uint16()))
            if offset < end { for index in offset..<end { image[index] = 0 } }
        case 2:
            image.removeLast(min(image.count, Int(input.uint16())))
        case 3:
            image += input.bytes(Int(input.byte()))
        default:
            let from = Int(input.byte() % 2)
            let source = HealingLayout.slotOffsets[from], target = HealingLayout.slotOffsets[1 - from]
            guard image.count >= HealingLayout.slotOffsets[1] + CommitSlot.length else { return }
            image.replaceSubrange(target..<(target + CommitSlot.length), with: image[source..<(source + CommitSlot.length)])
        }
    }

    static func entry(_ input: inout FuzzInput) -> V2FileWriter.Entry {
        let op = input.byte()
        switch op % 4 {
        case 2:
            var id = ItemPlaintext.itemID(input.byte()).bytes
            let time = op & 0x20 != 0 ? Int64(bitPattern: input.uint64()) : Int64(input.uint16()) * 86_400_000
            if op & 0x08 != 0 { id = Array((input.bytes(Int(input.byte())) + [UInt8](repeating: 0, count: 16)).prefix(16)) }
            return .deletion(kind: op & 0x10 != 0 ? 3 : 2, id: id, time: time)
        case 3:
            let plaintext = input.bytes(Int(input.uint16()))
            // The secret box is bound to the id the attributes plaintext names, as a writer would bind it.
            let id = ItemPlaintext.itemID(namedBy: plaintext)
            return put(&input, op, attributes: plaintext, id: id)
        default:
            let id = ItemPlaintext.itemID(input.byte())
            return put(&input, op, attributes: ItemPlaintext.attributes(&input, op, id: id), id: id)
        }
    }

    static func put(_ input: inout FuzzInput, _ op: UInt8, attributes: [UInt8], id: ItemID) -> V2FileWriter.Entry {
        let secret = input.bytes(op & 0x20 != 0 ? Int(input.uint16()) : Int(input.byte()))
        let namedLength = op & 0x40 != 0 ? UInt32(input.uint16()) << 16 | UInt32(input.uint16()) : nil
        return .put(attributes: attributes, itemID: id, secret: secret, namedLength: namedLength, digestMask: op & 0x80 != 0 ? 1 : 0)
    }
}
