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
/// belong to then verifies by its tags, and writes back with ``writeBack(_:)``. The parity a writer extends is
/// computed from the last chunk's bytes when it opens, and used only if it equals the parity the newest slot
/// stored: otherwise appends wait for a repair.
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
    /// Which slot place holds ``newest`` (0 or 1); an append writes the other.
    private var newestPlace: Int?
    /// The log's written end (logical).
    private(set) var writtenEnd: Int
    /// The parity of the last, partial chunk, computed from its bytes and equal to what the newest slot stored;
    /// `nil` while that is not known to hold (bytes unreadable or missing, a mismatch), and appends wait.
    private var tailParity: ChunkParity?
    /// Why appends are refused, if they are.
    private(set) var appendRefusal: String?
    /// The logical range the last write claims but the file does not hold (it is shorter: the slot reached the
    /// disk before the file's new size did). Read as erasures by ``repair(chunk:)``.
    private(set) var missingRange: Range<Int>?

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
    /// - Parameter rewriteEnd: The log's end when it was last rewritten, from the verified header: nothing
    ///   below it may be written over, whatever the slots say.
    /// - Throws: `KeychainError.corrupted` if the file is shorter than the older slot's written end (it was
    ///   cut below a commit that was acknowledged), or a slot claims more than ``maximumLogLength``; `.io` if
    ///   the file's size cannot be read.
    init(opening file: any KeychainFileHandle, headerKey: SymmetricKey, epoch: UInt64, rewriteEnd: Int = 0) throws(KeychainError) {
        self.file = file
        self.headerKey = headerKey
        self.epoch = epoch
        let size = try file.size()
        var slots: [CommitSlot?] = []
        for (place, offset) in HealingLayout.slotOffsets.enumerated() {
            guard size >= offset + CommitSlot.length else {
                slots.append(nil)
                continue
            }
            // Unreadable sectors read as zeros: a seal copy there does not decode, and the other may.
            let bytes = Self.readTolerating(file, count: CommitSlot.length, at: offset).bytes
            let slot = CommitSlot.decode(bytes, headerKey: headerKey, epoch: epoch)
            // A seal in the place its counter does not name was not put there by a writer of this format.
            slots.append(slot.flatMap { Int($0.seal.counter % 2) == place && $0.seal.counter < UInt64.max ? $0 : nil })
        }
        (newest, older) = CommitSlot.newest(slots[0], slots[1])
        newestPlace = newest.map { Int($0.seal.counter % 2) }
        for slot in [newest, older] {
            guard let claimed = slot?.seal.writtenEnd, claimed > UInt64(Self.maximumLogLength) else { continue }
            throw .corrupted(offset: HealingLayout.slotOffsets[0], reason: "a commit slot says the log is \(claimed) bytes long, more than 2^48")
        }
        let newestEnd = Int(newest?.seal.writtenEnd ?? 0)
        let olderEnd = Int(older?.seal.writtenEnd ?? 0)
        writtenEnd = max(newestEnd, rewriteEnd)
        let held = HealingLayout.physicalEnd(ofLog: writtenEnd)
        if size < held {
            // The slot reached the disk before the file's new size: the last write's bytes are missing. Below the
            // older commit (or the rewrite) the file was cut.
            let floor = HealingLayout.physicalEnd(ofLog: max(olderEnd, rewriteEnd))
            guard newest != nil, size >= floor else {
                throw .corrupted(
                    offset: size, reason: "the file ends at byte \(size), but its commits say its log reaches byte \(held): it was cut")
            }
            missingRange = max(olderEnd, rewriteEnd)..<writtenEnd
            appendRefusal = "the last write did not reach the disk whole; repair the log first"
        } else if newest == nil && size > HealingLayout.physicalEnd(ofLog: rewriteEnd) {
            appendRefusal = "no commit slot reads, and the log holds bytes past its rewrite; repair it first"
        }
        tailParity = nil
        if appendRefusal == nil {
            let tailStart = writtenEnd - writtenEnd % ChunkParity.dataLength
            let tail = Self.readTolerating(file, count: writtenEnd - tailStart, at: HealingLayout.physical(tailStart))
            let computed = ChunkParity(chunk: tail.bytes)
            if !tail.unreadable.isEmpty {
                appendRefusal = "the log's last chunk could not be read; repair it first"
            } else if let stored = newest?.parity, newestEnd == writtenEnd, stored != computed {
                appendRefusal = "the log's last chunk does not match its parity; repair it first"
            } else {
                tailParity = computed
            }
        }
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
    /// other commit slot, then one `fdatasync` (two for records over 64 KiB or when `flushBetween`, so that a
    /// durable slot implies durable data). The caller holds the file's exclusive lock.
    ///
    /// - Parameters:
    ///   - committedEnd: The log's committed end after this append: at least the last commit's, at most the
    ///     new written end.
    ///   - headSequence: The sequence number of the record ending at `committedEnd`.
    ///   - headChain: That record's chain value (16 bytes).
    /// - Throws: `KeychainError.io` if appends are refused (``appendRefusal``), if the slots on disk are no
    ///   longer the ones this log read (another writer: reopen), or if a write or sync fails. After a failure
    ///   once writing began, the new slot may still reach the disk: this log refuses further appends until it
    ///   is opened again.
    func append(
        _ bytes: [UInt8], committedEnd: Int, headSequence: UInt64, headChain: [UInt8], flushBetween: Bool = false
    ) throws(KeychainError) {
        if let appendRefusal { throw .io(operation: "append (\(appendRefusal))", errno: EIO, path: file.path) }
        guard var parity = tailParity else {
            throw .io(operation: "append (the log's last chunk is not known to match its parity)", errno: EIO, path: file.path)
        }
        let newEnd = writtenEnd + bytes.count
        precondition(committedEnd <= newEnd, "nothing is committed past the written end")
        precondition(committedEnd >= Int(newest?.seal.committedEnd ?? 0), "a commit never takes back an earlier one")
        try checkSlotsUnchanged()
        do throws(KeychainError) {
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
            if flushBetween || bytes.count > Self.largeRecord { try file.sync() }
            let counter = (newest?.seal.counter ?? 0) + 1
            let place = Int(counter % 2)
            precondition(place != newestPlace, "an append never writes the slot of the last commit")
            let slot = CommitSlot(
                seal: Seal(
                    epoch: epoch, counter: counter, writtenEnd: UInt64(newEnd), committedEnd: UInt64(committedEnd),
                    headSequence: headSequence, headChain: headChain),
                parity: parity)
            try slot.encoded(headerKey: headerKey).withBytes { (raw) throws(KeychainError) in
                try file.writeAll(raw, at: HealingLayout.slotOffsets[place])
            }
            try file.sync()
            older = newest
            newest = slot
            newestPlace = place
            writtenEnd = newEnd
            tailParity = parity
        } catch {
            appendRefusal = "an earlier append failed after it began writing (\(error)); open the log again"
            throw error
        }
    }

    /// Records over this many bytes get a flush before their slot is written.
    static let largeRecord = 65_536

    /// Throws unless both slot places still hold what this log read (nothing another writer appended since).
    private func checkSlotsUnchanged() throws(KeychainError) {
        for (place, offset) in HealingLayout.slotOffsets.enumerated() {
            let expected = [newest, older].compactMap { $0 }.first { Int($0.seal.counter % 2) == place }
            guard (try? file.size()).map({ $0 >= offset + CommitSlot.length }) == true else {
                guard expected == nil else { throw Self.changed(file) }
                continue
            }
            let bytes = Self.readTolerating(file, count: CommitSlot.length, at: offset).bytes
            let found = CommitSlot.decode(bytes, headerKey: headerKey, epoch: epoch)
            guard found?.seal == expected?.seal else { throw Self.changed(file) }
        }
    }

    private static func changed(_ file: any KeychainFileHandle) -> KeychainError {
        .io(operation: "append (the commit slots changed since this log read them: another writer; open it again)", errno: EAGAIN, path: file.path)
    }

    /// A chunk's repair, as proposed by ``repair(chunk:)``: nothing of it is on disk until ``writeBack(_:)``.
    struct ChunkRepair {
        let chunk: Int
        /// The chunk's bytes as repaired (codewords that could not be repaired are left as read).
        let data: [UInt8]
        /// The chunk offsets whose bytes changed.
        let changedOffsets: [Int]
        /// The parity with its own damaged symbols corrected (unrepaired codewords keep what was stored).
        let parity: ChunkParity
        /// Whether any parity symbol was corrected.
        let parityChanged: Bool
        let unrepairedCodewords: [Int]
    }

    /// Proposes repaired bytes for chunk `chunk` of the log, from the parity on disk: the complete chunk's own,
    /// or the newest slot's for the last one. Writes nothing.
    ///
    /// Sectors that cannot be read (`EIO`), and bytes the last write claims but the file does not hold, are
    /// zero-filled and repaired as erasures.
    func repair(chunk: Int) throws(KeychainError) -> ChunkRepair {
        let start = chunk * ChunkParity.dataLength
        let count = max(0, min(ChunkParity.dataLength, writtenEnd - start))
        guard count > 0 else {
            return ChunkRepair(chunk: chunk, data: [], changedOffsets: [], parity: ChunkParity(), parityChanged: false, unrepairedCodewords: [])
        }
        let held = max(0, min(count, (try file.size()) - HealingLayout.physical(start)))
        var (data, erasedData) = Self.readTolerating(file, count: held, at: HealingLayout.physical(start))
        if held < count {
            data += [UInt8](repeating: 0, count: count - held)
            for offset in held..<count { erasedData.insert(offset) }
        }
        var parity: ChunkParity
        var erasedParity: Set<Int> = []
        if count == ChunkParity.dataLength {
            let stored = Self.readTolerating(file, count: ChunkParity.parityLength, at: HealingLayout.parityOffset(ofChunk: chunk))
            parity = ChunkParity(storedBytes: stored.bytes)
            erasedParity = stored.unreadable
        } else if let stored = newest?.parity {
            parity = stored
        } else {
            return ChunkRepair(
                chunk: chunk, data: data, changedOffsets: [], parity: ChunkParity(), parityChanged: false,
                unrepairedCodewords: Array(0..<ChunkParity.depth))
        }
        let read = data
        let before = parity
        let result = parity.repair(chunk: &data, erasedData: erasedData, erasedParity: erasedParity)
        var best = ChunkRepair(
            chunk: chunk, data: data, changedOffsets: result.changedOffsets, parity: parity, parityChanged: parity != before,
            unrepairedCodewords: result.unrepairedCodewords)
        guard !best.unrepairedCodewords.isEmpty else { return best }
        // The last write may not have reached the disk whole (its slot may have, before its bytes): its range
        // as erasures, with the same parity; then the older commit's parity over the chunk as it stood then.
        let olderEnd = Int(older?.seal.writtenEnd ?? 0)
        let lastWriteStart = max(olderEnd, start)
        let lastWriteEnd = min(writtenEnd, start + count)
        if newest != nil, lastWriteStart < lastWriteEnd {
            var retried = read
            var retriedParity = before
            let erased = erasedData.union((lastWriteStart - start)..<(lastWriteEnd - start))
            let again = retriedParity.repair(chunk: &retried, erasedData: erased, erasedParity: erasedParity)
            if again.unrepairedCodewords.count < best.unrepairedCodewords.count {
                best = ChunkRepair(
                    chunk: chunk, data: retried, changedOffsets: again.changedOffsets, parity: retriedParity,
                    parityChanged: retriedParity != before, unrepairedCodewords: again.unrepairedCodewords)
            }
        }
        if let olderParity = older?.parity, olderEnd > start, olderEnd < start + ChunkParity.dataLength, !best.unrepairedCodewords.isEmpty {
            // The older slot's parity covers this chunk's bytes below its written end (the rest were zeros then).
            var prefix = Array(read[0..<(olderEnd - start)])
            var parityThen = olderParity
            let erasedThen = erasedData.filter { $0 < olderEnd - start }
            let then = parityThen.repair(chunk: &prefix, erasedData: erasedThen, erasedParity: [])
            if then.unrepairedCodewords.isEmpty {
                // Only the bytes below the older commit are proposed; the last write's stay as read, and the
                // codewords they left unrepaired stay listed, so that a write-back takes no parity from this.
                best = ChunkRepair(
                    chunk: chunk, data: prefix + read[(olderEnd - start)...], changedOffsets: then.changedOffsets,
                    parity: before, parityChanged: false, unrepairedCodewords: best.unrepairedCodewords)
            }
        }
        return best
    }

    /// Writes back a repair the caller confirmed (what its bytes belong to verifies by its tags): only the bytes
    /// that changed, then a sync, then the corrected parity — the complete chunk's in place, the last chunk's
    /// into the memory the next append extends — and a sync. Parity is never recomputed from the chunk as read:
    /// that would make it agree with damage a repair left (an unrepaired codeword).
    func writeBack(_ repair: ChunkRepair) throws(KeychainError) {
        let start = repair.chunk * ChunkParity.dataLength
        precondition(start + repair.data.count <= writtenEnd, "a chunk of the log")
        var index = 0
        let changed = repair.changedOffsets
        while index < changed.count {
            // A run of adjacent changed offsets is written as one piece.
            var end = index + 1
            while end < changed.count && changed[end] == changed[end - 1] + 1 { end += 1 }
            let piece = Array(repair.data[changed[index]...changed[end - 1]])
            try piece.withBytes { (raw) throws(KeychainError) in
                try file.writeAll(raw, at: HealingLayout.physical(start + changed[index]))
            }
            index = end
        }
        try file.sync()
        if repair.data.count == ChunkParity.dataLength {
            if repair.parityChanged {
                try repair.parity.bytes.withBytes { (raw) throws(KeychainError) in
                    try file.writeAll(raw, at: HealingLayout.parityOffset(ofChunk: repair.chunk))
                }
                try file.sync()
            }
        } else if repair.unrepairedCodewords.isEmpty && start + repair.data.count == writtenEnd {
            tailParity = repair.parity
            if appendRefusal != nil && missingRange == nil { appendRefusal = nil }
        }
    }

    /// The longest log a file may have (2^48 bytes): a bound on what a slot can make a reader compute with.
    static let maximumLogLength = 1 << 48

    /// The sector size unreadable bytes are counted in.
    static let sectorSize = 512

    /// Reads `count` bytes at physical offset `offset`; where a read fails (`EIO` from a bad sector, or the file
    /// ending early), reads again sector by sector and zero-fills the sectors that still fail. Returns the bytes
    /// and the offsets, relative to `offset`, that could not be read.
    private static func readTolerating(_ file: any KeychainFileHandle, count: Int, at offset: Int) -> (bytes: [UInt8], unreadable: Set<Int>) {
        if let bytes = try? file.readExactly(count: count, at: offset) { return (bytes, []) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        var unreadable: Set<Int> = []
        var position = 0
        while position < count {
            let sectorEnd = min(count, ((offset + position) / sectorSize + 1) * sectorSize - offset)
            if let sector = try? file.readExactly(count: sectorEnd - position, at: offset + position) {
                bytes += sector
            } else {
                bytes += [UInt8](repeating: 0, count: sectorEnd - position)
                for lost in position..<sectorEnd { unreadable.insert(lost) }
            }
            position = sectorEnd
        }
        return (bytes, unreadable)
    }
}
