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
/// any point leaves it readable and describing the log up to its committed end. ``cut(to:)`` takes back an
/// undone transaction the same way: a new slot first, then the file's new size.
///
/// Parity is never trusted: ``repair(chunk:)`` only proposes bytes, which the caller accepts if what they
/// belong to then verifies by its tags, and writes back with ``writeBack(_:)``. The parity a writer extends is
/// computed from the last chunk's bytes when it opens, and used only if it equals the parity the newest slot
/// stored: otherwise appends wait for a repair, a cut, or records set aside (``setAside(_:)``).
///
/// The caller replays the log after opening it and tells the log what only the records show: that a slot's
/// head is not the records' (``checkHeads(_:)``, a fork), or that the newest commit's records do not verify
/// (``setAside(_:)``).
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
    /// The log's end when it was last rewritten, from the verified header: acknowledged, whatever the slots say.
    let rewriteEnd: Int
    /// The newest commit slot that reads.
    private(set) var newest: CommitSlot?
    /// The commit before ``newest``, if its slot reads and it belongs to the same history: a slot written
    /// before a cut, or whose head the records contradict (``checkHeads(_:)``), is no older commit.
    var older: CommitSlot?
    /// The seal each slot place held when this log last read or wrote it (as ``CommitSlot/decode`` reads it):
    /// an append first checks that no other writer changed them since.
    private var placed: [Seal?]
    /// The log's written end (logical).
    private(set) var writtenEnd: Int
    /// The log bytes the newest commit's write put down: they may not all have reached the disk (§3 rule 2).
    var lastWrite: Range<Int>
    /// The parity of the last, partial chunk, computed from its bytes and equal to what the newest slot stored
    /// (or carried from that slot past records set aside); `nil` while that is not known to hold, and appends
    /// wait.
    var tailParity: ChunkParity?
    /// Why appends are refused, if they are.
    var appendRefusal: HealingLogRefusal?
    /// The logical range the last write claims but the file does not hold (it is shorter: the slot reached the
    /// disk before the file's new size did). Read as erasures by ``repair(chunk:)``.
    var missingRange: Range<Int>?
    /// When the file was opened shorter than its commits say (with ``missingRange``): the first chunk of the last
    /// write. The parity of each complete chunk from there on may not have reached the disk whole — cut off with
    /// the file's end, or lost to a crash of an earlier writer between extending the file and writing it — and is
    /// computed again from verified records before the file is extended or committed to.
    var parityUnsureFromChunk: Int?
    /// Records the caller set aside as possibly acknowledged (§3 rule 2): kept, never cut, and the parity that
    /// could still repair them carried into every later commit, until ``dropSetAside(headSequence:headChain:)``.
    var setAsideRange: Range<Int>?

    /// A log with nothing written, in a file whose prefix (header pages, empty slots) the caller wrote.
    init(creating file: any KeychainFileHandle, headerKey: SymmetricKey, epoch: UInt64) {
        self.file = file
        self.headerKey = headerKey
        self.epoch = epoch
        rewriteEnd = 0
        placed = [nil, nil]
        writtenEnd = 0
        lastWrite = 0..<0
        tailParity = ChunkParity()
    }

    /// Opens the log of `file`: the newest commit slot of this epoch that reads says how far it goes.
    ///
    /// - Parameter rewriteEnd: The log's end when it was last rewritten, from the verified header: nothing
    ///   below it may be written over, whatever the slots say.
    /// - Throws: `KeychainError.corrupted` if the file is shorter than the older slot's written end (it was
    ///   cut below a commit that was acknowledged), or a slot claims more than ``maximumLogLength``; `.io` if
    ///   the file's size cannot be read, or a slot's read fails and neither slot reads.
    init(opening file: any KeychainFileHandle, headerKey: SymmetricKey, epoch: UInt64, rewriteEnd: Int = 0) throws(KeychainError) {
        self.file = file
        self.headerKey = headerKey
        self.epoch = epoch
        self.rewriteEnd = rewriteEnd
        let size = try file.size()
        var decoded: [CommitSlot?] = []
        var readFailure: KeychainError?
        for offset in HealingLayout.slotOffsets {
            // Unreadable sectors read as zeros: a seal copy there does not decode, and the other may.
            var bytes: [UInt8] = []
            if size >= offset + CommitSlot.length {
                do {
                    bytes = try Self.readRetrying(file, count: CommitSlot.length, at: offset)
                } catch {
                    readFailure = readFailure ?? error
                    bytes = Self.readTolerating(file, count: CommitSlot.length, at: offset).bytes
                }
            }
            decoded.append(CommitSlot.decode(bytes, headerKey: headerKey, epoch: epoch))
        }
        // No slot read, and a read failed: the error, never a log with nothing committed (a failing disk or a
        // read that fails for now must not pass for an empty log, whose state a reader would then serve).
        if let readFailure, decoded.allSatisfy({ $0 == nil }) { throw readFailure }
        placed = decoded.map { $0?.seal }
        // A seal counts only in the place its counter names (a writer of this format put it there), and below
        // UInt64.max (so that the next counter exists).
        var counted = decoded.enumerated().map { place, slot in
            slot.flatMap { Int($0.seal.counter % 2) == place && $0.seal.counter < UInt64.max ? $0 : nil }
        }
        // A torn slot is the write a crash interrupted, never acknowledged: with the other slot read, the log
        // is what that one says, and the torn write's bytes are a remnant (§3 rule 3). Alone, it is kept for
        // its ends, which reach at least as far as the lost slot's; its parity is not used (``newestParity``).
        for place in 0..<2 where counted[place]?.isTorn == true && counted[1 - place] != nil { counted[place] = nil }
        (newest, older) = CommitSlot.newest(counted[0], counted[1])
        for slot in [newest, older] {
            guard let claimed = slot?.seal.writtenEnd, claimed > UInt64(Self.maximumLogLength) else { continue }
            throw .corrupted(offset: HealingLayout.slotOffsets[0], reason: "a commit slot says the log is \(claimed) bytes long, more than 2^48")
        }
        var lastWriteStart = Int(older?.seal.writtenEnd ?? 0)
        if let newestSeal = newest?.seal, let olderSeal = older?.seal, !Self.precedes(olderSeal, newestSeal) {
            // The older slot was written before a cut: it describes bytes that were cut, and may have been
            // written over since. The newest slot is that cut's, which wrote no log bytes.
            older = nil
            lastWriteStart = Int(newestSeal.writtenEnd)
        }
        let newestEnd = Int(newest?.seal.writtenEnd ?? 0)
        writtenEnd = max(newestEnd, rewriteEnd)
        lastWrite = min(max(lastWriteStart, rewriteEnd), writtenEnd)..<writtenEnd
        let held = HealingLayout.physicalEnd(ofLog: writtenEnd)
        if size < held {
            // The slot reached the disk before the file's new size: the last write's bytes are missing. Below the
            // older commit (or the rewrite) the file was cut.
            guard newest != nil, size >= HealingLayout.physicalEnd(ofLog: lastWrite.lowerBound) else {
                throw .corrupted(
                    offset: size, reason: "the file ends at byte \(size), but its commits say its log reaches byte \(held): it was cut")
            }
            missingRange = lastWrite
            parityUnsureFromChunk = lastWrite.lowerBound / ChunkParity.dataLength
            appendRefusal = .lastWriteMissing
        } else if newest == nil && size > HealingLayout.physicalEnd(ofLog: rewriteEnd) {
            appendRefusal = .noCommitSlot
        }
        tailParity = nil
        if appendRefusal == nil {
            let tailStart = writtenEnd - writtenEnd % ChunkParity.dataLength
            let tail = Self.readTolerating(file, count: writtenEnd - tailStart, at: HealingLayout.physical(tailStart))
            let computed = ChunkParity(chunk: tail.bytes)
            if !tail.unreadable.isEmpty {
                appendRefusal = .tailUnreadable
            } else if let newest, Int(newest.seal.writtenEnd) == writtenEnd, newest.isTorn || newest.parity != computed {
                // (A torn slot's parity is of unknown age: the tail waits for a repair or the caller's tags.)
                appendRefusal = .tailMismatch
            } else {
                tailParity = computed
            }
        }
    }

    /// Whether `earlier` can be the commit before `later` in one history: neither end moves back. Only a cut
    /// moves the written end back, and only dropping records set aside moves the committed end back.
    static func precedes(_ earlier: Seal, _ later: Seal) -> Bool {
        earlier.writtenEnd <= later.writtenEnd && earlier.committedEnd <= later.committedEnd
    }

    /// The parity the newest slot stored for the last chunk, if it is that chunk's: `nil` without a slot, for
    /// a torn slot (its parity may be partly another write's), or when the rewrite reaches past the slot's end.
    var newestParity: ChunkParity? {
        guard let newest, !newest.isTorn, Int(newest.seal.writtenEnd) == writtenEnd else { return nil }
        return newest.parity
    }

    /// The committed end, head sequence and chain value of the newest commit, if any.
    var committed: Seal? { newest?.seal }

    /// The end of what is committed: the newest commit's, or the rewrite's if that is further.
    var committedEnd: Int { max(Int(newest?.seal.committedEnd ?? 0), rewriteEnd) }

    /// Reads `count` log bytes at logical offset `offset`, across chunks.
    func read(at offset: Int, count: Int) throws(KeychainError) -> [UInt8] {
        precondition(offset >= 0 && count >= 0, "a range inside the log")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        var position = offset
        while position < offset + count {
            let inChunk = min(offset + count - position, ChunkParity.dataLength - position % ChunkParity.dataLength)
            bytes += try Self.readRetrying(file, count: inChunk, at: HealingLayout.physical(position))
            position += inChunk
        }
        return bytes
    }

    /// Appends `bytes` to the log and commits: the bytes, the parity of every chunk they complete, and the
    /// other commit slot, then one `fdatasync` (two for records over 64 KiB or when `flushBetween`, so that a
    /// durable slot implies durable data). A remnant past the written end is cut off first (§3 rules 3 and 4).
    /// The caller holds the file's exclusive lock.
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
        let start = writtenEnd
        let newEnd = start + bytes.count
        precondition(committedEnd <= newEnd, "nothing is committed past the written end")
        precondition(committedEnd >= self.committedEnd, "a commit never takes back an earlier one")
        try checkSlotsUnchanged()
        try poisoningOnFailure { () throws(KeychainError) in
            try cutRemnant()
            var position = start
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
            try commit(
                writtenEnd: newEnd, committedEnd: committedEnd, headSequence: headSequence, headChain: headChain, parity: parity,
                lastWrite: start..<newEnd)
        }
    }

    /// Records over this many bytes get a flush before their slot is written.
    static let largeRecord = 65_536

    /// Writes the slot the newest commit does not use — a seal with the next counter and `parity`, the last
    /// chunk's — and syncs; then that slot is the newest commit. The one write an append, a cut and a drop
    /// share; the caller has checked the slots and turns a failure into ``HealingLogRefusal/failedWrite(_:)``.
    func commit(
        writtenEnd newEnd: Int, committedEnd: Int, headSequence: UInt64, headChain: [UInt8], parity: ChunkParity, lastWrite: Range<Int>
    ) throws(KeychainError) {
        let current = newest?.seal.counter ?? 0
        // An open never takes a slot at UInt64.max: the next counter must stay below it too.
        guard current < UInt64.max - 1 else { throw .limitReached("the commit counter of this epoch is exhausted; rewrite the file") }
        let counter = current + 1
        let place = Int(counter % 2)
        let slot = CommitSlot(
            seal: Seal(
                epoch: epoch, counter: counter, writtenEnd: UInt64(newEnd), committedEnd: UInt64(committedEnd),
                headSequence: headSequence, headChain: headChain),
            parity: parity)
        try slot.encoded(headerKey: headerKey).withBytes { (raw) throws(KeychainError) in
            try file.writeAll(raw, at: HealingLayout.slotOffsets[place])
        }
        placed[place] = slot.seal
        try file.sync()
        older = newest.flatMap { Self.precedes($0.seal, slot.seal) ? $0 : nil }
        newest = slot
        writtenEnd = newEnd
        tailParity = parity
        self.lastWrite = lastWrite
    }

    /// Runs `body`, which writes; a failure once it began leaves this log refusing writes until it is opened
    /// again (the page cache may still write out what it wrote, which this log would not know of).
    func poisoningOnFailure(_ body: () throws(KeychainError) -> Void) throws(KeychainError) {
        do throws(KeychainError) {
            try body()
        } catch {
            appendRefusal = .failedWrite("\(error)")
            throw error
        }
    }

    /// Whether both slot places still hold what this log read or wrote: no other writer committed, cut or
    /// repaired since, even if the file's size came back to what it was.
    func slotsAsPlaced() -> Bool {
        guard let size = try? file.size() else { return false }
        for (place, offset) in HealingLayout.slotOffsets.enumerated() {
            let bytes = size >= offset + CommitSlot.length ? Self.readTolerating(file, count: CommitSlot.length, at: offset).bytes : []
            guard CommitSlot.decode(bytes, headerKey: headerKey, epoch: epoch)?.seal == placed[place] else { return false }
        }
        return true
    }

    /// Throws unless both slot places still hold what this log read or wrote (nothing another writer appended
    /// since).
    func checkSlotsUnchanged() throws(KeychainError) {
        let size = try file.size()
        for (place, offset) in HealingLayout.slotOffsets.enumerated() {
            let bytes = size >= offset + CommitSlot.length ? Self.readTolerating(file, count: CommitSlot.length, at: offset).bytes : []
            guard CommitSlot.decode(bytes, headerKey: headerKey, epoch: epoch)?.seal == placed[place] else {
                throw .io(
                    operation: "append (the commit slots changed since this log read them: another writer; open it again)",
                    errno: EAGAIN, path: file.path)
            }
        }
    }

    /// The longest log a file may have (2^48 bytes): a bound on what a slot can make a reader compute with.
    static let maximumLogLength = 1 << 48

    /// The sector size unreadable bytes are counted in.
    static let sectorSize = 512

    /// How many times a read that fails with EIO is made, one right after the other, before its bytes count as
    /// unreadable: a drive or a network file system that fails a read for a moment returns the bytes on a later
    /// try, and bytes that merely failed to read once must not be taken for damage (SPEC §19.5).
    static let readAttempts = 3

    /// Reads exactly `count` bytes at physical offset `offset`, trying again at once while the read fails with
    /// EIO, up to ``readAttempts`` tries in all.
    ///
    /// - Throws: `KeychainError.io` if the last try fails with EIO; any other failure (another errno, a file that
    ///   ends early) at once.
    static func readRetrying(_ file: any KeychainFileHandle, count: Int, at offset: Int) throws(KeychainError) -> [UInt8] {
        var attempt = 1
        while true {
            do {
                return try file.readExactly(count: count, at: offset)
            } catch .io(_, let code, _) where code == EIO && attempt < readAttempts {
                attempt += 1
            }
        }
    }

    /// Reads `count` bytes at physical offset `offset` (``readRetrying(_:count:at:)``); where that fails (`EIO` from
    /// a bad sector every try, or the file ending early), reads again sector by sector, once each, and zero-fills
    /// the sectors that still fail. Returns the bytes and the offsets, relative to `offset`, that could not be read.
    static func readTolerating(_ file: any KeychainFileHandle, count: Int, at offset: Int) -> (bytes: [UInt8], unreadable: Set<Int>) {
        if let bytes = try? readRetrying(file, count: count, at: offset) { return (bytes, []) }
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
