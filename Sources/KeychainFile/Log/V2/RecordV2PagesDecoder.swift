import Dispatch
@_spi(KeychainFileInternals) import KeychainCrypto

/// Verifies and decodes a version 2 record for replay with its pages opened on several threads: the record's
/// result, or its error, is exactly ``RecordV2Decoder/decode(_:at:previousChain:keys:)``'s.
///
/// A page's associated data names the tag of the page before it, which is in the record's bytes, so pages open in
/// any order (Docs/FormatVersion2.md §5). The record is scanned on the calling thread; its pages are cut into
/// shares (``ParallelTuning/shareBounds(weights:)``) that up to ``ParallelTuning/workerCount`` threads, the calling
/// one included, open — decrypt into the record's arena, check every entry, digest and secret box's tag as
/// ``RecordV2Decoder/parsePage(_:page:in:keys:)`` does, and compute each put's ``ItemDigests`` — each share stopping
/// at its first failing page. The calling thread takes the shares in page order (``RecordV2PagesOpening``): the
/// first failure is the one the sequential decoder meets first, and is thrown; otherwise it makes each put's block
/// (attributes and secret box, copied from the arena and the record's bytes) itself, so that the blocks the index
/// keeps are allocated by the thread that frees them (see ``WindowedRecordDecoder/Outcome``).
enum RecordV2PagesDecoder {
    /// Decodes the record at `offset` of `bytes`: ``start(_:at:previousChain:keys:tuning:)`` and its ``RecordV2PagesOpening/finish()``.
    static func decode(
        _ bytes: [UInt8], at offset: Int, previousChain: [UInt8], keys: RecordKeysV2, tuning: ParallelTuning = .current
    ) throws(KeychainError) -> ReplayedRecordV2 {
        try start(bytes, at: offset, previousChain: previousChain, keys: keys, tuning: tuning).finish()
    }

    /// Scans the record at `offset` of `bytes` and has other threads start opening its pages.
    ///
    /// - Throws: what ``RecordV2Decoder/scan(_:at:)`` throws for the record's frame.
    static func start(
        _ bytes: [UInt8], at offset: Int, previousChain: [UInt8], keys: RecordKeysV2, tuning: ParallelTuning = .current
    ) throws(KeychainError) -> RecordV2PagesOpening {
        let scanned = try RecordV2Decoder.scan(bytes, at: offset)
        let bounds = tuning.shareBounds(weights: scanned.pages.map { page in page.secrets.reduce(page.box.count) { $0 + 64 + $1.count } })
        let opening = RecordV2PagesOpening(record: scanned, bytes: bytes, previousChain: previousChain, keys: keys, bounds: bounds)
        if opening.shareCount > 1 {
            for _ in 1..<min(tuning.workerCount, opening.shareCount) {
                DispatchQueue.global().async { opening.openShares() }
            }
        }
        return opening
    }

    /// The entry of a put whose attributes (a view of the arena) and secret box (`box` of `bytes`) verified: both
    /// copied into one block, which the index keeps as it is (``StoredItem``).
    static func put(_ id: ItemID, _ attributes: ItemAttributes, box: Range<Int>, in bytes: [UInt8]) -> DecodedEntry {
        let block = attributes.encoded.withUnsafeBytes { encoded in
            bytes.withUnsafeBytes { all in
                ItemBytes.make(attributes: encoded, chain: UnsafeRawBufferPointer(start: nil, count: 0), box: UnsafeRawBufferPointer(rebasing: all[box]))
            }
        }
        // The put's entry in its page: kind, attributes length, the attributes plaintext, secret length, digest.
        let entryBytes = 1 + 4 + AttributeCoding.headerByteCount + attributes.encoded.count + 4 + RecordV2.secretBoxDigestSize
        let secret = SealedSecret(
            box: block.boxView, hasChain: false, sequence: 0, kind: .put, entryCount: 0, entryIndex: 0,
            entryByteCount: RecordV2.boxFieldHeaderSize + box.count + entryBytes)
        return .put(id: id, attributes: ItemAttributes(itemClass: attributes.itemClass, count: attributes.count, encoded: block.attributesView), secret: secret)
    }
}
