@_spi(KeychainFileInternals) import KeychainCrypto

/// The frame and limits of a format version 3 record (Docs/FormatVersion3.md §2.5.1), big-endian:
///
/// ```
/// record  = u32 L ‖ u32 L xor 0xFFFFFFFF ‖ u8 kind ‖ u64 sequence ‖ u32 part ‖ u16 segment count n ‖ u32 frame check
///           ‖ n × segment ‖ chain tag (16)
/// segment = u8 key id ‖ u32 segment length S ‖ u32 page box length P ‖ page box (P) ‖ secret boxes (S − P)
/// ```
///
/// `L` counts the bytes after the first 8, up to and including the chain tag: 72 … 16 MiB. Key id 0 is the **heads**
/// segment (``HeadsV3``, under the log side's heads key, `S = P`): exactly one in a commit, its last, and none in a
/// transaction part. Key ids 1 … 255 are a group's segments, one page each (``GroupPageV3``), followed by the secret
/// boxes of its puts back to back; only the page, encrypted, names their lengths and digests, so a reader without the
/// group key sees a segment's key id and two lengths and nothing it could count items by.
///
/// The **frame check** is the first 4 bytes of SHA-256 over the 23 bytes before it and every segment's 9-byte
/// header, in order: unkeyed, as version 2's, so that damage to the frame or a segment header is found by a scan at
/// its own record before anything is authenticated. The **chain tag** (``ChainTagV3``) then binds the record to the
/// log under the epoch's chain key.
enum RecordV3 {
    /// Length, length check, kind, sequence, part, segment count and frame check.
    static let frameSize = 27
    static let frameCheckOffset = 23
    static let frameCheckSize = 4
    static let segmentCountOffset = 21
    /// Key id, segment length, page box length.
    static let segmentHeaderSize = 9
    /// A segment's smallest: its header and an empty box.
    static let minimumSegmentSize = segmentHeaderSize + boxOverhead
    static let chainTagSize = 16
    /// Nonce and tag of an AES-256-GCM box.
    static let boxOverhead = 28
    /// The frame after the first 8 bytes, one smallest segment and the chain tag.
    static let minimumBodyLength = frameSize - 8 + minimumSegmentSize + chainTagSize
    /// As version 2: records stay small enough to open in bounded memory; larger transactions take parts.
    static let maximumBodyLength = RecordV2.maximumBodyLength
    static let maximumSegmentCount = Int(UInt16.max)
    /// Key id 0: the heads segment.
    static let headsKeyID: UInt8 = 0

    /// The frame check of a record whose first 23 bytes are `frame` and whose segment headers are `segmentHeaders`
    /// (9 bytes each, in order).
    static func frameCheck(frame: some Collection<UInt8>, segmentHeaders: [UInt8]) -> [UInt8] {
        var hash = SHA256()
        hash.update(data: frame)
        hash.update(data: segmentHeaders)
        return Array(hash.finalize().prefix(frameCheckSize))
    }

    /// The most segments a body of `length` bytes can hold.
    static func segmentCountLimit(bodyLength length: Int) -> Int {
        min(maximumSegmentCount, max(0, length - (frameSize - 8) - chainTagSize) / minimumSegmentSize)
    }
}
