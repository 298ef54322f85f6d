@_spi(KeychainFileInternals) import KeychainCrypto

/// Seals entries into one version 2 record (`RecordV2`): pages of at most 8 KiB of plaintext, each after its
/// puts' secret boxes.
///
/// ```swift
/// let (bytes, chain) = try RecordV2Encoder.encode(
///     entries, kind: .commit, sequence: 1, part: 0, previousChain: c0, keys: keys, using: &generator)
/// ```
enum RecordV2Encoder {
    /// The record's bytes and its chain value (the tag of its last page).
    ///
    /// - Throws: `.limitReached` when the record would pass `RecordV2.maximumBodyLength` (the caller splits
    ///   it into parts) or a secret passes 1 MiB; `.invalidParameter` for no entries.
    static func encode<Generator: RandomNumberGenerator>(
        _ entries: [EntryV2], kind: RecordV2.Kind, sequence: UInt64, part: UInt32, previousChain: [UInt8],
        keys: RecordKeysV2, using generator: inout Generator
    ) throws(KeychainError) -> (bytes: [UInt8], chain: [UInt8]) {
        guard !entries.isEmpty else { throw .invalidParameter("a record needs at least one entry") }
        let pages = paginate(entries)
        // Every box field's header (key id, role, length), known before anything is sealed: the frame check
        // covers them.
        var fields = ByteWriter(capacity: RecordV2.boxFieldHeaderSize * (pages.count + entries.count))
        var bodyLength = RecordV2.fixedSize - 8
        for page in pages {
            var plaintext = 3
            for entry in entries[page] {
                plaintext += entry.pageByteCount
                let secretBoxLength: Int
                switch entry {
                case .put(_, _, let secret): secretBoxLength = secret.count + 28
                case .copy(_, _, let box):
                    guard box.count >= 28 else { throw .invalidParameter("a secret box to copy is shorter than 28 bytes") }
                    secretBoxLength = box.count
                case .delete, .tombstone: continue
                }
                guard secretBoxLength - 28 <= RecordV2.maximumSecretSize else { throw .limitReached("a secret is larger than 1 MiB") }
                writeBoxFieldHeader(role: .secret, length: secretBoxLength, into: &fields)
                bodyLength += RecordV2.boxFieldHeaderSize + secretBoxLength
            }
            writeBoxFieldHeader(role: .page, length: plaintext + 28, into: &fields)
            bodyLength += RecordV2.boxFieldHeaderSize + plaintext + 28
        }
        guard bodyLength <= RecordV2.maximumBodyLength else {
            throw .limitReached("the record would be more than 16 MiB; a larger transaction is written in parts")
        }
        let boxCount = fields.count / RecordV2.boxFieldHeaderSize
        var out = ByteWriter(capacity: 8 + bodyLength)
        out.writeUInt32(UInt32(bodyLength))
        out.writeUInt32(UInt32(bodyLength) ^ 0xFFFF_FFFF)
        out.writeUInt8(kind.rawValue)
        out.writeUInt64(sequence)
        out.writeUInt32(part)
        out.writeUInt32(UInt32(entries.count))
        out.writeUInt32(UInt32(boxCount))
        out.writeBytes(RecordV2.frameCheck(frame: out.bytes, boxFields: fields.bytes))
        var chain = previousChain
        var boxIndex: UInt32 = 0
        for page in pages {
            var plaintext = ByteWriter(capacity: RecordV2.pagePlaintextLimit)
            plaintext.writeUInt8(RecordV2.pageEncodingVersion)
            plaintext.writeUInt16(UInt16(page.count))
            for entry in entries[page] {
                plaintext.writeUInt8(entry.kind)
                switch entry {
                case .put(let id, let attributes, let secret):
                    let aad = BoxAADV2.secret(fileID: keys.fileID, keyID: 0, itemID: id)
                    let box = try seal(secret, aad: aad, key: keys.secret, using: &generator)
                    writeBoxField(box, role: .secret, into: &out)
                    boxIndex += 1
                    let encoded = AttributeCoding.encode(id: id, attributes: attributes)
                    plaintext.writeUInt32(UInt32(encoded.count))
                    plaintext.writeBytes(encoded)
                    plaintext.writeUInt32(UInt32(secret.count))
                    plaintext.writeBytes(RecordV2.secretBoxDigest(box))
                case .copy(let id, let attributes, let box):
                    writeBoxField(box, role: .secret, into: &out)
                    boxIndex += 1
                    let encoded = AttributeCoding.encode(id: id, attributes: attributes)
                    plaintext.writeUInt32(UInt32(encoded.count))
                    plaintext.writeBytes(encoded)
                    plaintext.writeUInt32(UInt32(box.count - 28))
                    plaintext.writeBytes(RecordV2.secretBoxDigest(box))
                case .delete(let id, let time), .tombstone(let id, let time):
                    plaintext.writeBytes(id.bytes)
                    plaintext.writeUInt64(UInt64(bitPattern: time))
                }
            }
            let place = BoxAADV2.PagePlace(
                sequence: sequence, kind: kind.rawValue, part: part, entryCount: UInt32(entries.count),
                boxCount: UInt32(boxCount), boxIndex: boxIndex, keyID: 0)
            let aad = BoxAADV2.page(fileID: keys.fileID, epoch: keys.epoch, place: place, previousChain: chain)
            let box = try seal(plaintext.bytes, aad: aad, key: keys.page, using: &generator)
            writeBoxField(box, role: .page, into: &out)
            boxIndex += 1
            chain = Array(box.suffix(16))
        }
        return (out.bytes, chain)
    }

    /// The entries of each page: a page takes entries while its plaintext stays within the limit, and always
    /// at least one.
    static func paginate(_ entries: [EntryV2]) -> [Range<Int>] {
        var pages: [Range<Int>] = []
        var start = 0
        var size = 3
        for (index, entry) in entries.enumerated() {
            if index > start, size + entry.pageByteCount > RecordV2.pagePlaintextLimit {
                pages.append(start..<index)
                start = index
                size = 3
            }
            size += entry.pageByteCount
        }
        pages.append(start..<entries.count)
        return pages
    }

    private static func writeBoxField(_ box: [UInt8], role: RecordV2.Role, into out: inout ByteWriter) {
        writeBoxFieldHeader(role: role, length: box.count, into: &out)
        out.writeBytes(box)
    }

    /// `u8 key id (0) ‖ u8 role ‖ u32 length`.
    private static func writeBoxFieldHeader(role: RecordV2.Role, length: Int, into out: inout ByteWriter) {
        out.writeUInt8(0)
        out.writeUInt8(role.rawValue)
        out.writeUInt32(UInt32(length))
    }

    private static func seal<Generator: RandomNumberGenerator>(
        _ plaintext: [UInt8], aad: [UInt8], key: AES.GCM.PreparedKey, using generator: inout Generator
    ) throws(KeychainError) -> [UInt8] {
        var box = [UInt8](repeating: 0, count: plaintext.count + 28)
        let nonce = AES.GCM.Nonce(using: &generator)
        let sealed = plaintext.withUnsafeBytes { text in
            aad.withUnsafeBytes { aad in
                box.withUnsafeMutableBytes { out in
                    (try? AES.GCM.seal(text, using: key, nonce: nonce, authenticating: aad, into: out)) != nil
                }
            }
        }
        // The box is sized for the plaintext, and plaintexts are bounded far below GCM's limit.
        guard sealed else { throw .invalidParameter("AES-GCM could not seal a box of \(plaintext.count) bytes") }
        return box
    }
}

extension RecordV2Encoder {
    /// Seals a transaction of any size: one commit record when it fits 16 MiB, else parts 0 … n−1 (kind 3) and
    /// a commit of part n, each as large as fits, applied together or not at all (`TransactionLayout`).
    ///
    /// - Returns: the records' bytes, in order, and the chain value after the last.
    static func encodeTransaction<Generator: RandomNumberGenerator>(
        _ entries: [EntryV2], firstSequence: UInt64, previousChain: [UInt8], keys: RecordKeysV2,
        using generator: inout Generator
    ) throws(KeychainError) -> (records: [[UInt8]], chain: [UInt8]) {
        guard !entries.isEmpty else { throw .invalidParameter("a transaction needs at least one entry") }
        var records: [[UInt8]] = []
        var chain = previousChain
        var start = 0
        var part: UInt32 = 0
        while start < entries.count {
            var end = entries.count
            while true {
                let isLast = end == entries.count
                do {
                    let record = try encode(
                        Array(entries[start..<end]), kind: isLast ? .commit : .part, sequence: firstSequence + UInt64(part),
                        part: part, previousChain: chain, keys: keys, using: &generator)
                    records.append(record.bytes)
                    chain = record.chain
                    break
                } catch .limitReached(let reason) {
                    // Too large: try the first half of what is left; one entry always fits (a secret ≤ 1 MiB,
                    // attributes ≤ 64 × 64 KiB), so this ends.
                    guard end - start > 1 else { throw .limitReached(reason) }
                    end = start + (end - start) / 2
                }
            }
            start = end
            part += 1
        }
        return (records, chain)
    }
}
