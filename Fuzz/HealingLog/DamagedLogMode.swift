@testable import KeychainCrypto
@testable import KeychainFile

/// Mode (b): records appended by the harness, so that the seals authenticate, then damage from the input.
///
/// Layout after the selector byte: the record count (`n % 8 + 1`); per record a big-endian u16 size
/// (`% 9,000 + 1`: up to 72,000 bytes, past the first chunk) and a flags byte (bit 0: committed, else a transaction part; bit 1: flush between); then
/// operations to the end of the input, each an opcode byte (`% 8`) and its operands:
/// 0 flip (u24 offset, xor byte), 1 zero (u24 offset, u16 length), 2 cut the file (u24 size), 3 append garbage
/// (u16 length), 4 make unreadable (u24 offset, u16 length; at most four), 5 copy one slot over the other
/// (a byte: which), 6 scribble in a slot (a byte: which, u16 offset, a byte: length), 7 the rewrite end (u24,
/// at most the log's length plus 64 KiB). Offsets are taken modulo the file's size.
enum DamagedLogMode {
    static let selector: UInt8 = 0x80

    static func run(_ input: [UInt8]) {
        var reader = InputReader(input)
        // The records, appended and committed by a log that knows the key.
        let file = FaultyFileHandle(bytes: [UInt8](repeating: 0, count: HealingLayout.logStart))
        let writer = HealingLog(creating: file, headerKey: HealingExercise.key, epoch: 1)
        var random = FuzzRandom(seed: UInt64(input.count))
        var written: [UInt8] = []
        var committedEnd = 0
        var heads: [Int: Head] = [0: Head(epoch: 1, sequence: 0, chainValue: chain(0))]
        var sequence: UInt64 = 0
        for _ in 0...(Int(reader.byte()) % 8) {
            let size = Int(reader.u16()) % 9_000 + 1
            let flags = reader.byte()
            let record = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
            written += record
            if flags & 1 == 1 || committedEnd == 0 {
                committedEnd = written.count
                sequence += 1
                heads[committedEnd] = Head(epoch: 1, sequence: sequence, chainValue: chain(sequence))
            }
            do {
                try writer.append(record, committedEnd: committedEnd, headSequence: sequence, headChain: chain(sequence), flushBetween: flags & 2 == 2)
            } catch {
                Invariant.check(false, "an append to an undamaged log failed: \(error)")
            }
        }
        let pristine = (try? file.inner.readExactly(count: try file.inner.size(), at: 0)) ?? []
        var image = pristine
        var unreadable: [Range<Int>] = []
        var rewriteEnd = 0
        var damaged = false
        while !reader.isAtEnd {
            damaged = true
            let size = max(image.count, 1)
            switch reader.byte() % 8 {
            case 0:
                let offset = reader.u24() % size
                if offset < image.count { image[offset] ^= max(1, reader.byte()) }
            case 1:
                let offset = reader.u24() % size
                let end = min(image.count, offset + Int(reader.u16()) % 16_384)
                if offset < end { for index in offset..<end { image[index] = 0 } }
            case 2:
                image = Array(image.prefix(reader.u24() % (image.count + 1)))
            case 3:
                image += (0..<(Int(reader.u16()) % 70_000)).map { _ in UInt8.random(in: 0...255, using: &random) }
            case 4:
                let offset = reader.u24() % size
                if unreadable.count < 4 { unreadable.append(offset..<(offset + Int(reader.u16()) % 16_384 + 1)) } else { _ = reader.u16() }
            case 5:
                let from = Int(reader.byte() % 2)
                let source = HealingLayout.slotOffsets[from], target = HealingLayout.slotOffsets[1 - from]
                guard image.count >= HealingLayout.slotOffsets[1] + CommitSlot.length else { continue }
                image.replaceSubrange(target..<(target + CommitSlot.length), with: image[source..<(source + CommitSlot.length)])
            case 6:
                let slot = HealingLayout.slotOffsets[Int(reader.byte() % 2)]
                let start = slot + Int(reader.u16()) % CommitSlot.length
                let end = min(slot + CommitSlot.length, start + Int(reader.byte()))
                for index in start..<end where index < image.count { image[index] = UInt8.random(in: 0...255, using: &random) }
            default:
                rewriteEnd = reader.u24() % (written.count + 65_537)
            }
        }
        let file2 = FaultyFileHandle(bytes: image, unreadable: unreadable)
        guard let (log, repairs) = HealingExercise.readEverything(file2, rewriteEnd: rewriteEnd) else {
            Invariant.check(damaged, "an undamaged log does not open")
            return
        }
        if !damaged {
            Invariant.check(log.writtenEnd == written.count && log.committedEnd == committedEnd, "the undamaged log's ends")
            Invariant.check(log.appendRefusal == nil, "the undamaged log refuses appends: \(String(describing: log.appendRefusal))")
            Invariant.check((try? log.read(at: 0, count: written.count)) == written, "the undamaged log reads back")
            Invariant.check(repairs.allSatisfy { $0.changedOffsets.isEmpty && $0.unrepairedCodewords.isEmpty }, "an undamaged chunk repaired")
            Invariant.check((try? HealingFileHandle(log: log).readExactly(count: written.count, at: 0)) == written, "the handle reads back")
        }
        write(log, repairs: repairs, written: written, heads: heads, readable: unreadable.isEmpty)
    }

    /// What a writer does after the reader: checks heads, writes back repairs the records confirm, confirms or
    /// sets aside the last chunk, cuts back to the committed end and appends; then opens the file again.
    static func write(_ log: HealingLog, repairs: [HealingLog.ChunkRepair], written: [UInt8], heads: [Int: Head], readable: Bool) {
        try? log.checkHeads { heads[$0] }
        for repair in repairs {
            let start = repair.chunk * ChunkParity.dataLength
            // The harness's records stand in for the tags that confirm a repair.
            guard repair.changedOffsets.allSatisfy({ start + $0 < written.count && repair.data[$0] == written[start + $0] }) else { continue }
            try? log.writeBack(repair)
        }
        let committed = log.committedEnd
        if log.appendRefusal == .tailMismatch {
            let tailStart = log.writtenEnd - log.writtenEnd % ChunkParity.dataLength
            if log.writtenEnd <= written.count, (try? log.read(at: tailStart, count: log.writtenEnd - tailStart)) == Array(written[tailStart..<log.writtenEnd]) {
                try? log.confirmLastChunk()
            } else if let committedSeal = log.committed, Int(committedSeal.committedEnd) > max(log.rewriteEnd, Int(log.older?.seal.committedEnd ?? 0)) {
                try? log.setAside(max(log.rewriteEnd, Int(log.older?.seal.committedEnd ?? 0))..<Int(committedSeal.committedEnd))
            }
        }
        if (try? log.cut(to: committed)) != nil {
            Invariant.check(log.writtenEnd == committed, "a cut to \(committed) left the log at \(log.writtenEnd)")
        }
        let next: [UInt8] = [0x4E, 0x45, 0x58, 0x54]
        let before = log.writtenEnd
        guard (try? log.append(next, committedEnd: before + next.count, headSequence: 1_000, headChain: chain(1_000))) != nil else { return }
        Invariant.check(log.writtenEnd == before + next.count, "an append moved the end to \(log.writtenEnd)")
        let again = HealingExercise.readEverything(log.file, rewriteEnd: log.rewriteEnd, repairing: false)
        // (The fake's unreadable sectors stay so when written: they may hold the record, or the new slot's
        // seal copies, and then the log reopens at the commit before.)
        if readable {
            Invariant.check((try? log.read(at: before, count: next.count)) == next, "an append does not read back")
            Invariant.check(again?.log.writtenEnd == before + next.count, "reopened after an append: end \(String(describing: again?.log.writtenEnd))")
        }
    }

    /// A chain value for sequence number `sequence`.
    static func chain(_ sequence: UInt64) -> [UInt8] { (0..<16).map { UInt8(truncatingIfNeeded: sequence &+ UInt64($0)) } }
}

/// Reads the input; past its end every value is zero.
struct InputReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position >= bytes.count }

    mutating func byte() -> UInt8 {
        defer { position += 1 }
        return position < bytes.count ? bytes[position] : 0
    }

    mutating func u16() -> UInt16 { UInt16(byte()) << 8 | UInt16(byte()) }

    mutating func u24() -> Int { Int(byte()) << 16 | Int(byte()) << 8 | Int(byte()) }
}
