/// Where things lie in a format version 2 file (Docs/FormatVersion2.md §1): header page A, commit slots 0 and
/// 1, header page B, then the log's chunks, each complete chunk followed by its parity.
///
/// ```swift
/// HealingLayout.physical(0)            // 32,768: the log's first byte
/// HealingLayout.physical(57_088)       // 98,048: chunk 1, after chunk 0's data and parity
/// ```
enum HealingLayout {
    /// A header page: one copy of the header and its own parity.
    static let headerPageLength = 4_096
    /// The room each commit slot has: its 8,448 bytes padded to whole 4 KiB pages, so that writing one slot
    /// never rewrites a sector (or page) that holds part of the other.
    static let slotStride = 12_288
    /// Where each commit slot starts.
    static let slotOffsets = [headerPageLength, headerPageLength + slotStride]
    /// Where header page B starts: 24 KiB after page A.
    static let headerBOffset = headerPageLength + 2 * slotStride
    /// Where the log's first chunk starts.
    static let logStart = headerBOffset + headerPageLength
    /// A complete chunk and its parity.
    static let chunkStride = ChunkParity.dataLength + ChunkParity.parityLength

    /// The physical offset of logical log offset `logical`.
    static func physical(_ logical: Int) -> Int {
        logStart + (logical / ChunkParity.dataLength) * chunkStride + logical % ChunkParity.dataLength
    }

    /// Where the parity of complete chunk `chunk` lies.
    static func parityOffset(ofChunk chunk: Int) -> Int {
        logStart + chunk * chunkStride + ChunkParity.dataLength
    }

    /// The physical size of a file whose log is `writtenEnd` bytes long: a complete last chunk ends with its
    /// parity; a partial one ends with its data (its parity is in the commit slot).
    static func physicalEnd(ofLog writtenEnd: Int) -> Int {
        let chunks = writtenEnd / ChunkParity.dataLength
        let rest = writtenEnd % ChunkParity.dataLength
        return logStart + chunks * chunkStride + rest
    }
}
