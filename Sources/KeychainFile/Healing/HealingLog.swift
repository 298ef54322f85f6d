#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import KeychainCrypto

/// The physical layer of a format version 2 file (Docs/FormatVersion2.md §1–3): the log's bytes in chunks
/// with Reed–Solomon parity, and the two commit slots that say how far it was written and committed.
///
/// An append writes only bytes no committed state uses — the log past its written end, the parity of chunks
/// it completes — and the commit slot the last commit did not use, then makes them durable with one
/// `fdatasync`. The slot of the last acknowledged commit is never touched by the next append, so a crash at
/// any point leaves it readable and describing the log up to its committed end.
///
/// Parity is never trusted: ``repair(chunk:)`` only proposes bytes, which the caller accepts if what they
/// belong to then verifies by its tags, and writes back with ``writeBack(chunk:data:)``. The parity a writer
/// extends is computed from the log's bytes when it opens (the caller verifies them before appending).
///
/// For example:
/// ```swift
/// let log = try HealingLog(opening: file, headerKey: keys.header, epoch: 1)
/// try log.append(record, committedEnd: log.writtenEnd + record.count, headSequence: 8, headChain: chain)
/// ```
final class HealingLog {
    let file: any KeychainFileHandle
    let headerKey: SymmetricKey
    let epoch: UInt64
    /// The newest commit slot that reads, and the one before it.
    private(set) var newest: CommitSlot?
    private(set) var older: CommitSlot?
    /// The log's written end (logical).
    private(set) var writtenEnd: Int
    /// The parity of the last, partial chunk, computed from its bytes (not read from a slot); `nil` when some of
    /// them could not be read, until a repair writes them back.
    private var tailParity: ChunkParity?

    /// A log with nothing written, in a file whose prefix (header pages, empty slots) the caller wrote.
    init(creating file: any KeychainFileHandle, headerKey: SymmetricKey, epoch: UInt64) {
        self.file = file
        self.headerKey = headerKey
        self.epoch = epoch
        writtenEnd = 0
        tailParity = ChunkParity()
    }

    /// Opens the log of `file`: the newest commit slot of this epoch that reads says how far it goes.
    ///
    /// - Throws: `KeychainError.corrupted` if the file is shorter than the newest slot's written end says (it
    ///   was cut); `.io` if it cannot be read.
    init(opening file: any KeychainFileHandle, headerKey: SymmetricKey, epoch: UInt64) throws(KeychainError) {
        self.file = file
        self.headerKey = headerKey
        self.epoch = epoch
        let size = try file.size()
        var slots: [CommitSlot?] = []
        for offset in HealingLayout.slotOffsets {
            guard size >= offset + CommitSlot.length else {
                slots.append(nil)
                continue
            }
            let slot = CommitSlot.decode(try file.readExactly(count: CommitSlot.length, at: offset), headerKey: headerKey)
            slots.append(slot?.seal.epoch == epoch ? slot : nil)
        }
        (newest, older) = CommitSlot.newest(slots[0], slots[1])
        let claimed = newest?.seal.writtenEnd ?? 0
        guard claimed <= UInt64(Self.maximumLogLength) else {
            throw .corrupted(offset: HealingLayout.slotOffsets[0], reason: "a commit slot says the log is \(claimed) bytes long, more than 2^48")
        }
        writtenEnd = Int(claimed)
        let physicalEnd = HealingLayout.physicalEnd(ofLog: writtenEnd)
        guard size >= physicalEnd else {
            throw .corrupted(
                offset: size, reason: "the file ends at byte \(size), but its commit slot says its log reaches byte \(physicalEnd): it was cut")
        }
        tailParity = nil
        let tailStart = writtenEnd - writtenEnd % ChunkParity.dataLength
        let tail = try readTolerating(count: writtenEnd - tailStart, at: HealingLayout.physical(tailStart))
        if tail.unreadable.isEmpty { tailParity = ChunkParity(chunk: tail.bytes) }
    }

    /// The committed end, head sequence and chain value of the newest commit, if any.
    var committed: Seal? { newest?.seal }

    /// Reads `count` log bytes at logical offset `offset`, across chunks.
    func read(at offset: Int, count: Int) throws(KeychainError) -> [UInt8] {
        precondition(offset >= 0 && count >= 0, "a range inside the log")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        var position = offset
        while position < offset + count {
            let inChunk = min(offset + count - position, ChunkParity.dataLength - position % ChunkParity.dataLength)
            bytes += try file.readExactly(count: inChunk, at: HealingLayout.physical(position))
            position += inChunk
        }
        return bytes
    }

    /// Appends `bytes` to the log and commits: the bytes, the parity of every chunk they complete, and the
    /// other commit slot, then one `fdatasync` (two when `flushBetween`: for large records, so that a durable
    /// slot implies durable data).
    ///
    /// - Parameters:
    ///   - committedEnd: The log's committed end after this append (≤ its written end).
    ///   - headSequence: The sequence number of the record ending at `committedEnd`.
    ///   - headChain: That record's chain value (16 bytes).
    /// - Throws: `KeychainError.io` if a write or the sync fails; the last commit then still stands.
    func append(
        _ bytes: [UInt8], committedEnd: Int, headSequence: UInt64, headChain: [UInt8], flushBetween: Bool = false
    ) throws(KeychainError) {
        let newEnd = writtenEnd + bytes.count
        precondition(committedEnd <= newEnd, "nothing is committed past the written end")
        guard var parity = tailParity else {
            throw .io(operation: "append (the log's last chunk could not be read; repair it first)", errno: EIO, path: file.path)
        }
        var position = writtenEnd
        var consumed = 0
        while consumed < bytes.count {
            let chunkOffset = position % ChunkParity.dataLength
            let count = min(bytes.count - consumed, ChunkParity.dataLength - chunkOffset)
            let piece = Array(bytes[consumed..<(consumed + count)])
            try piece.withBytes { (raw) throws(KeychainError) in try file.writeAll(raw, at: HealingLayout.physical(position)) }
            parity.append(piece, at: chunkOffset)
            position += count
            consumed += count
            if position % ChunkParity.dataLength == 0 {
                let chunk = position / ChunkParity.dataLength - 1
                try parity.bytes.withBytes { (raw) throws(KeychainError) in
                    try file.writeAll(raw, at: HealingLayout.parityOffset(ofChunk: chunk))
                }
                parity = ChunkParity()
            }
        }
        if flushBetween { try file.sync() }
        let counter = (newest?.seal.counter ?? 0) + 1
        let slot = CommitSlot(
            seal: Seal(
                epoch: epoch, counter: counter, writtenEnd: UInt64(newEnd), committedEnd: UInt64(committedEnd),
                headSequence: headSequence, headChain: headChain),
            parity: parity)
        let encoded = slot.encoded(headerKey: headerKey)
        try encoded.withBytes { (raw) throws(KeychainError) in
            try file.writeAll(raw, at: HealingLayout.slotOffsets[Int(counter % 2)])
        }
        try file.sync()
        older = newest
        newest = slot
        writtenEnd = newEnd
        tailParity = parity
    }

    /// Proposes repaired bytes for chunk `chunk` of the log, from the parity on disk: the complete chunk's own,
    /// or the newest slot's for the last one. Writes nothing.
    ///
    /// Sectors that cannot be read (`EIO`) are zero-filled and repaired as erasures, 512 bytes at a time.
    ///
    /// - Returns: The chunk's bytes as repaired, the chunk offsets changed, and the codewords that could not be
    ///   repaired (left as read).
    func repair(chunk: Int) throws(KeychainError) -> (data: [UInt8], changedOffsets: [Int], unrepairedCodewords: [Int]) {
        let start = chunk * ChunkParity.dataLength
        precondition(start < writtenEnd || (start == 0 && writtenEnd == 0), "a chunk of the log")
        let count = min(ChunkParity.dataLength, writtenEnd - start)
        var (data, erasedData) = try readTolerating(count: count, at: HealingLayout.physical(start))
        var parity: ChunkParity
        var erasedParity: Set<Int> = []
        if count == ChunkParity.dataLength {
            let stored = try readTolerating(count: ChunkParity.parityLength, at: HealingLayout.parityOffset(ofChunk: chunk))
            parity = ChunkParity(storedBytes: stored.bytes)
            erasedParity = stored.unreadable
        } else if let stored = newest?.parity {
            parity = stored
        } else {
            return (data, [], Array(0..<ChunkParity.depth))
        }
        let result = parity.repair(chunk: &data, erasedData: erasedData, erasedParity: erasedParity)
        return (data, result.changedOffsets, result.unrepairedCodewords)
    }

    /// The longest log a file may have (2^48 bytes): a bound on what a slot can make a reader compute with.
    static let maximumLogLength = 1 << 48

    /// The sector size unreadable bytes are counted in.
    static let sectorSize = 512

    /// Reads `count` bytes at physical offset `offset`; where a read fails (`EIO` from a bad sector), reads
    /// again sector by sector and zero-fills the sectors that still fail. Returns the bytes and the offsets,
    /// relative to `offset`, that could not be read.
    private func readTolerating(count: Int, at offset: Int) throws(KeychainError) -> (bytes: [UInt8], unreadable: Set<Int>) {
        do throws(KeychainError) {
            return (try file.readExactly(count: count, at: offset), [])
        } catch .io {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(count)
            var unreadable: Set<Int> = []
            var position = 0
            while position < count {
                let sectorEnd = min(count, ((offset + position) / Self.sectorSize + 1) * Self.sectorSize - offset)
                do throws(KeychainError) {
                    bytes += try file.readExactly(count: sectorEnd - position, at: offset + position)
                } catch .io {
                    bytes += [UInt8](repeating: 0, count: sectorEnd - position)
                    for lost in position..<sectorEnd { unreadable.insert(lost) }
                }
                position = sectorEnd
            }
            return (bytes, unreadable)
        }
    }

    /// Writes confirmed bytes of chunk `chunk` back (the caller verified them by their tags), and the chunk's
    /// parity recomputed from them; then syncs. The last chunk's parity goes into the memory the next append
    /// extends, and reaches its slot with that append.
    func writeBack(chunk: Int, data: [UInt8]) throws(KeychainError) {
        let start = chunk * ChunkParity.dataLength
        precondition(start + data.count <= writtenEnd, "bytes inside the log")
        var position = start
        var offset = 0
        while offset < data.count {
            let count = min(data.count - offset, ChunkParity.dataLength - position % ChunkParity.dataLength)
            try Array(data[offset..<(offset + count)]).withBytes { (raw) throws(KeychainError) in
                try file.writeAll(raw, at: HealingLayout.physical(position))
            }
            position += count
            offset += count
        }
        let whole = try read(at: start, count: min(ChunkParity.dataLength, writtenEnd - start))
        let parity = ChunkParity(chunk: whole)
        if whole.count == ChunkParity.dataLength {
            try parity.bytes.withBytes { (raw) throws(KeychainError) in
                try file.writeAll(raw, at: HealingLayout.parityOffset(ofChunk: chunk))
            }
        } else {
            tailParity = parity
        }
        try file.sync()
    }
}
