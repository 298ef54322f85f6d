@_spi(KeychainFileInternals) import KeychainCrypto

/// One group segment of a version 3 record (Docs/FormatVersion3.md §2.5.1): a page sealed under the group's page
/// key as page `n` of the group's chain, followed by the secret boxes of its puts.
///
/// The page's plaintext is version 2's (SPEC §24.2, encoding version 1, ``EntryV2`` and ``PageEntryV2``'s kinds):
/// `u8 1 ‖ u16 entry count ‖ entries`, a put naming its attributes, its secret's length and its secret box's
/// BLAKE2b-128 digest (``RecordV2/secretBoxDigest(_:)``). What differs from version 2 is where the boxes are: after
/// the page, in its own segment, with no header of their own — so that only the page tells how many there are — and
/// that the plaintext is zero-padded to a size class (``paddedLength(_:)``), so that the page box's length does not
/// count a page's deletions, or tell one put from a few, to a reader without the group's key.
///
/// ```swift
/// let (segment, tag) = try GroupPageV3.seal(entries, keys: keysB, groupSequence: 1, previousTag: keysB.startValue(epoch: 1), using: &rng)
/// ```
enum GroupPageV3 {
    /// The encoding of the page's plaintext, as version 2's.
    static let encodingVersion = RecordV2.pageEncodingVersion

    /// Seals `entries` into one segment: `u8 key id ‖ u32 S ‖ u32 P ‖ page box ‖ secret boxes`.
    ///
    /// - Parameters:
    ///   - groupSequence: the page's place in the group's chain, from 1.
    ///   - previousTag: the tag of the group's page before it, or the start value for page 1.
    /// - Returns: the segment and its page's tag.
    /// - Throws: `.invalidParameter` for no entries or more than 65,535, a secret box to copy shorter than 28 bytes,
    ///   or a previous tag other than 16 bytes; `.limitReached` for a secret over 1 MiB or a segment over 4 GiB.
    static func seal<Generator: RandomNumberGenerator>(
        _ entries: [EntryV2], keys: GroupKeysV3, groupSequence: UInt64, previousTag: [UInt8], using generator: inout Generator
    ) throws(KeychainError) -> (segment: [UInt8], tag: [UInt8]) {
        guard !entries.isEmpty, entries.count <= Int(UInt16.max) else { throw .invalidParameter("a page holds 1 … 65,535 entries, not \(entries.count)") }
        guard previousTag.count == 16 else { throw .invalidParameter("a previous page tag is 16 bytes") }
        var plaintext = ByteWriter(capacity: 3 + entries.reduce(0) { $0 + $1.pageByteCount })
        plaintext.writeUInt8(encodingVersion)
        plaintext.writeUInt16(UInt16(entries.count))
        var secrets = ByteWriter()
        for entry in entries {
            plaintext.writeUInt8(entry.kind)
            switch entry {
            case .put(let id, let attributes, let secret):
                guard secret.count <= RecordV2.maximumSecretSize else { throw .limitReached("a secret is larger than 1 MiB") }
                let box = try sealBox(secret, key: keys.secretKey, aad: RecordAADV3.secret(fileID: keys.fileID, keyID: keys.keyID, itemID: id), using: &generator)
                writePut(id: id, attributes: attributes, box: box, into: &plaintext)
                secrets.writeBytes(box)
            case .copy(let id, let attributes, let box):
                guard box.count >= RecordV3.boxOverhead else { throw .invalidParameter("a secret box to copy is shorter than 28 bytes") }
                guard box.count - RecordV3.boxOverhead <= RecordV2.maximumSecretSize else { throw .limitReached("a secret is larger than 1 MiB") }
                writePut(id: id, attributes: attributes, box: box, into: &plaintext)
                secrets.writeBytes(box)
            case .delete(let id, let time), .tombstone(let id, let time):
                plaintext.writeBytes(id.bytes)
                plaintext.writeUInt64(UInt64(bitPattern: time))
            }
        }
        plaintext.writeBytes([UInt8](repeating: 0, count: paddedLength(plaintext.count) - plaintext.count))
        let aad = RecordAADV3.page(fileID: keys.fileID, keyID: keys.keyID, groupSequence: groupSequence, previousTag: previousTag)
        let page = try sealBox(plaintext.bytes, key: keys.pageKey, aad: aad, using: &generator)
        let length = page.count + secrets.count
        guard length <= Int(UInt32.max) else { throw .limitReached("a segment is larger than 4 GiB") }
        var segment = ByteWriter(capacity: RecordV3.segmentHeaderSize + length)
        segment.writeUInt8(keys.keyID)
        segment.writeUInt32(UInt32(length))
        segment.writeUInt32(UInt32(page.count))
        segment.writeBytes(page)
        segment.writeBytes(secrets.bytes)
        return (segment.bytes, Array(page.suffix(16)))
    }

    /// Opens the page of `segment` (ranges in `bytes`) as page `groupSequence` of its group's chain after
    /// `previousTag`, parses it, and checks that its puts name exactly the segment's secret boxes: each one's
    /// length, digest and tag.
    ///
    /// - Parameters:
    ///   - base: the offset in `bytes` that error offsets count from (the record's or the segment's start).
    ///   - place: how errors name the segment ("segment 3").
    /// - Returns: the entries; a put's secret box is its range in `bytes` (``openSecret(_:of:in:keys:)`` decrypts it).
    /// - Throws: `.corrupted` naming the group's key id when the page does not authenticate as that page of the
    ///   chain (a page of the group dropped, repeated, reordered or put back from older ones, or damage), or does not
    ///   parse, or a secret box is not the one its put names; `.unsupportedFeature` for a page that authenticates in
    ///   another page encoding.
    static func open(
        _ bytes: [UInt8], segment: SegmentV3, keys: GroupKeysV3, groupSequence: UInt64, previousTag: [UInt8], base: Int, place: String
    ) throws(KeychainError) -> [DecodedEntryV2] {
        var strict: [DamagedSecretV3]? = nil
        return try open(
            bytes, segment: segment, keys: keys, groupSequence: groupSequence, previousTag: previousTag, base: base, place: place,
            damagedSecrets: &strict)
    }

    /// ``open(_:segment:keys:groupSequence:previousTag:base:place:)`` for a recovering read, when `damagedSecrets` is
    /// not `nil`: a put whose secret box does not authenticate, in a page that does, is left out of the entries and
    /// appended there instead of failing the page — its item is lost, the page's other entries are not.
    static func open(
        _ bytes: [UInt8], segment: SegmentV3, keys: GroupKeysV3, groupSequence: UInt64, previousTag: [UInt8], base: Int, place: String,
        damagedSecrets: inout [DamagedSecretV3]?
    ) throws(KeychainError) -> [DecodedEntryV2] {
        let at = segment.pageBox.lowerBound - base
        func corrupted(_ reason: String) -> KeychainError { .corrupted(offset: at, reason: "record: \(place), group \(keys.keyID): \(reason)") }
        guard segment.keyID == keys.keyID, segment.pageBox.count >= RecordV3.boxOverhead, fits(segment.range, in: bytes) else {
            throw corrupted("not a segment of this group within the bytes given")
        }
        let aad = RecordAADV3.page(fileID: keys.fileID, keyID: keys.keyID, groupSequence: groupSequence, previousTag: previousTag)
        guard let sealed = try? AES.GCM.SealedBox(combined: bytes[segment.pageBox]),
              let plaintext = try? AES.GCM.open(sealed, using: keys.pageKey, authenticating: aad)
        else {
            throw corrupted("the page does not authenticate as page \(groupSequence) of the group's chain: a page of the group was dropped, repeated, reordered or replaced, or the page is damaged")
        }
        var reader = ByteReader(plaintext)
        var entries: [DecodedEntryV2] = []
        var nextBox = segment.secrets.lowerBound
        // The damaged puts of this page so far: a later entry naming the same item supersedes them.
        let firstDamaged = damagedSecrets?.count ?? 0
        func supersede(_ id: ItemID) {
            guard let end = damagedSecrets?.count, end > firstDamaged else { return }
            for index in firstDamaged..<end where damagedSecrets?[index].id == id { damagedSecrets?[index].superseded = true }
        }
        do {
            let version = try reader.readUInt8("page encoding version")
            guard version == encodingVersion else {
                throw KeychainError.unsupportedFeature(offset: at, reason: "record: \(place), group \(keys.keyID): page encoding version \(version); this version reads \(encodingVersion)")
            }
            let count = Int(try reader.readUInt16("entry count"))
            guard count >= 1 else { throw corrupted("a page without entries") }
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let kind = try reader.readUInt8("entry kind")
                switch kind {
                case 1:
                    let attributes = try reader.readRange(Int(try reader.readUInt32("attributes length")), "attributes")
                    var failure = ""
                    let decoded = plaintext.withUnsafeBytes { all -> (id: ItemID, attributes: ItemAttributes)? in
                        do {
                            return try AttributeCoding.decode(UnsafeRawBufferPointer(rebasing: all[attributes]))
                        } catch {
                            failure = "\(error)"
                            return nil
                        }
                    }
                    guard let decoded else { throw corrupted(failure) }
                    let secretLength = Int(try reader.readUInt32("secret length"))
                    guard secretLength <= RecordV2.maximumSecretSize else {
                        throw corrupted("the secret of item \(decoded.id) is \(secretLength) bytes; a secret is at most 1 MiB")
                    }
                    let digest = try reader.readBytes(RecordV2.secretBoxDigestSize, "secret box digest")
                    let boxLength = secretLength + RecordV3.boxOverhead
                    guard segment.secrets.upperBound - nextBox >= boxLength else {
                        throw corrupted("the put of item \(decoded.id) names a secret box of \(boxLength) bytes that the segment does not hold")
                    }
                    let box = nextBox..<(nextBox + boxLength)
                    nextBox = box.upperBound
                    var secretFailure: String? = nil
                    if !(RecordV2.secretBoxDigest(bytes[box]) == digest) {
                        secretFailure = "the secret box of item \(decoded.id) is not the one its page names: its digest differs"
                    } else if !verifySecret(bytes, box: box, id: decoded.id, keys: keys) {
                        secretFailure = "the secret box of item \(decoded.id) does not authenticate"
                    }
                    supersede(decoded.id)
                    if let secretFailure {
                        guard damagedSecrets != nil else {
                            throw KeychainError.corrupted(offset: box.lowerBound - base, reason: "record: \(place), group \(keys.keyID): \(secretFailure)")
                        }
                        damagedSecrets?.append(DamagedSecretV3(id: decoded.id, box: box, reason: secretFailure))
                        continue
                    }
                    entries.append(.put(id: decoded.id, attributes: decoded.attributes, secretBox: box))
                case 2, 3:
                    let id = try ItemID(bytes: try reader.readBytes(ItemID.byteCount, "item id"))
                    let time = Int64(bitPattern: try reader.readUInt64("time"))
                    supersede(id)
                    entries.append(kind == 2 ? .delete(id: id, time: time) : .tombstone(id: id, time: time))
                default:
                    throw corrupted("unknown entry kind \(kind)")
                }
            }
            let used = reader.offset
            guard plaintext.count == paddedLength(used), plaintext[used...].allSatisfy({ $0 == 0 }) else {
                throw corrupted("the page's padding: \(plaintext.count - used) bytes after entries that end at byte \(used), where \(paddedLength(used) - used) zero bytes are due")
            }
            guard nextBox == segment.secrets.upperBound else {
                throw corrupted("\(segment.secrets.upperBound - nextBox) bytes of secret boxes that no put names")
            }
        } catch let error as KeychainError {
            throw error
        } catch let underflow as ByteReader.Underflow {
            throw corrupted("truncated \(underflow.field) at byte \(underflow.offset) of the page")
        } catch {
            throw corrupted("\(error)")
        }
        return entries
    }

    /// The length a page's plaintext of `unpadded` bytes is zero-padded to: 256 bytes at least, then the next power of
    /// two up to 8 KiB (version 2's page limit), then the next multiple of 8 KiB (a page of one large entry).
    static func paddedLength(_ unpadded: Int) -> Int {
        if unpadded <= 256 { return 256 }
        if unpadded <= 8_192 { return 1 << (Int.bitWidth - (unpadded - 1).leadingZeroBitCount) }
        return (unpadded + 8_191) / 8_192 * 8_192
    }

    /// Decrypts a put's secret from its box `bytes[box]`, checking its tag for item `id`.
    ///
    /// - Throws: `.corrupted` if the box does not authenticate for `id` or does not lie within `bytes`.
    static func openSecret(_ box: Range<Int>, of id: ItemID, in bytes: [UInt8], keys: GroupKeysV3) throws(KeychainError) -> [UInt8] {
        let aad = RecordAADV3.secret(fileID: keys.fileID, keyID: keys.keyID, itemID: id)
        guard box.count >= RecordV3.boxOverhead, fits(box, in: bytes), let sealed = try? AES.GCM.SealedBox(combined: bytes[box]),
              let secret = try? AES.GCM.open(sealed, using: keys.secretKey, authenticating: aad)
        else { throw .corrupted(offset: max(0, box.lowerBound), reason: "the secret box of item \(id) does not authenticate") }
        return secret
    }

    /// Whether the tag of the secret box `bytes[box]` verifies for item `id` (its GHASH over the ciphertext; it is
    /// not decrypted).
    private static func verifySecret(_ bytes: [UInt8], box: Range<Int>, id: ItemID, keys: GroupKeysV3) -> Bool {
        let aad = RecordAADV3.secret(fileID: keys.fileID, keyID: keys.keyID, itemID: id)
        return bytes.withUnsafeBytes { all in
            aad.withUnsafeBytes { aad in
                (try? AES.GCM.verify(UnsafeRawBufferPointer(rebasing: all[box]), using: keys.secretKey, authenticating: aad)) != nil
            }
        }
    }

    private static func writePut(id: ItemID, attributes: ItemAttributes, box: [UInt8], into plaintext: inout ByteWriter) {
        let encoded = AttributeCoding.encode(id: id, attributes: attributes)
        plaintext.writeUInt32(UInt32(encoded.count))
        plaintext.writeBytes(encoded)
        plaintext.writeUInt32(UInt32(box.count - RecordV3.boxOverhead))
        plaintext.writeBytes(RecordV2.secretBoxDigest(box))
    }

    private static func sealBox<Generator: RandomNumberGenerator>(
        _ plaintext: [UInt8], key: SymmetricKey, aad: [UInt8], using generator: inout Generator
    ) throws(KeychainError) -> [UInt8] {
        do {
            return try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(using: &generator), authenticating: aad).combined ?? []
        } catch {
            throw .invalidParameter("AES-GCM could not seal a box of \(plaintext.count) bytes: \(error)")
        }
    }

    static func fits(_ range: Range<Int>, in bytes: [UInt8]) -> Bool {
        range.lowerBound >= 0 && range.upperBound <= bytes.count
    }
}
