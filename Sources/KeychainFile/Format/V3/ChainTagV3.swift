@_spi(KeychainFileInternals) import KeychainCrypto

/// The record chain of format version 3 (Docs/FormatVersion3.md §2.5.1): each record's last 16 bytes,
///
/// `HMAC-SHA256(K_chain, previous chain tag ‖ record[0 ..< 27] ‖ for each segment: u8 key id ‖ u32 S ‖ u32 P ‖ its page
/// box's tag)[0 ..< 16]`,
///
/// under the epoch's chain key, which every holder has. It binds the frame (kind, sequence, part, count, frame check)
/// and every segment's header and page tag to the record before, so that every holder checks the log's order and
/// completeness over every segment, including those it cannot open. A page's tag binds its ciphertext, and the page
/// its secret boxes by digest — for holders of the group key: a holder without it cannot tell the bytes behind a
/// page tag from others (§2.5).
enum ChainTagV3 {
    static let size = 16

    /// The chain tag of the record at `start` in `bytes`, whose segments are `segments` (ranges in `bytes`).
    static func compute(
        chainKey: SymmetricKey, previousChain: [UInt8], bytes: [UInt8], start: Int, segments: [SegmentV3]
    ) -> [UInt8] {
        var mac = HMAC<SHA256>(key: chainKey)
        mac.update(data: previousChain)
        mac.update(data: bytes[start..<(start + RecordV3.frameSize)])
        for segment in segments {
            // The header as it stands in the bytes (a scan checked it; a forgery in a test may not hold together).
            let header = segment.range.lowerBound..<min(segment.range.lowerBound + RecordV3.segmentHeaderSize, bytes.count)
            mac.update(data: bytes[header])
            mac.update(data: bytes[segment.pageTag])
        }
        return Array(mac.finalize().prefix(size))
    }

    /// Whether `tag` equals `expected`, compared in time that does not depend on where they differ.
    static func matches(_ tag: some Collection<UInt8>, _ expected: [UInt8]) -> Bool {
        guard tag.count == expected.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(tag, expected) { difference |= a ^ b }
        return difference == 0
    }
}
