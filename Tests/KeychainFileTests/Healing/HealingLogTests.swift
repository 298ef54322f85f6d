import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

/// The physical layer of format version 2 (Docs/FormatVersion2.md §1–3): appends commit through alternating
/// slots, a crash at any write leaves the last commit standing, and chunk parity repairs any damaged 4 KiB
/// region of the log.
@Suite("Healing: the log in chunks with commit slots")
struct HealingLogTests {
    static let key = SymmetricKey(data: [UInt8](repeating: 0x4B, count: 32))
    static let chain = [UInt8](repeating: 0xC0, count: 16)

    /// A file handle that records every write, sync and truncation, so that a test can rebuild the file as a
    /// crash after any of them, or in the middle of one, or with only some of them on disk, would have left it.
    /// It can also be told to fail its next sync.
    ///
    /// `@unchecked Sendable`: used by one test at a time, on one thread.
    final class RecordingHandle: KeychainFileHandle, @unchecked Sendable {
        enum Event {
            case write(offset: Int, bytes: [UInt8])
            case sync
            case truncate(size: Int)
        }
        let inner: MemoryFileHandle
        var events: [Event] = []
        /// Whether the next sync fails (with EIO, as fdatasync after a lost write does).
        var failNextSync = false
        var writes: [(offset: Int, bytes: [UInt8])] {
            events.compactMap { if case .write(let offset, let bytes) = $0 { (offset, bytes) } else { nil } }
        }
        var path: String { inner.path }
        var writeRefusal: Int32? { nil }
        init(_ inner: MemoryFileHandle) { self.inner = inner }
        func linkCount() throws(KeychainError) -> Int { 1 }
        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
            try inner.read(into: buffer, at: offset)
        }
        func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
            let written = try inner.write(bytes, at: offset)
            events.append(.write(offset: offset, bytes: Array(bytes.prefix(written))))
            return written
        }
        func size() throws(KeychainError) -> Int { try inner.size() }
        func truncate(to size: Int) throws(KeychainError) {
            try inner.truncate(to: size)
            events.append(.truncate(size: size))
        }
        func sync() throws(KeychainError) {
            if failNextSync {
                failNextSync = false
                throw .io(operation: "fdatasync", errno: EIO, path: path)
            }
            try inner.sync()
            events.append(.sync)
        }
        func identity() throws(KeychainError) -> FileIdentity { try inner.identity() }
        func close() { inner.close() }
    }

    /// A handle over `bytes`.
    static func handle(_ bytes: [UInt8]) -> MemoryFileHandle {
        let file = MemoryFile(inode: 1)
        file.bytes = bytes
        return MemoryFileHandle(file: file, path: "/v2.kcf")
    }

    static func bytes(of handle: MemoryFileHandle) throws -> [UInt8] {
        try handle.readExactly(count: try handle.size(), at: 0)
    }

    /// Records of the given sizes, seeded.
    static func records(_ sizes: [Int], seed: UInt64) -> [[UInt8]] {
        var random = TestRandom(seed: seed)
        return sizes.map { size in (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) } }
    }

    /// A file with `records` appended and committed one by one, and the log's bytes.
    static func file(with records: [[UInt8]]) throws -> (handle: MemoryFileHandle, log: [UInt8]) {
        let handle = handle([UInt8](repeating: 0, count: HealingLayout.logStart))
        let log = HealingLog(creating: handle, headerKey: key, epoch: 1)
        var all: [UInt8] = []
        for (index, record) in records.enumerated() {
            all += record
            try log.append(record, committedEnd: all.count, headSequence: UInt64(index + 1), headChain: chain)
        }
        return (handle, all)
    }

    static let sizes = [350, 20_000, 9_000, 40_000, 70_000, 1, 4_096, 12_345]

    @Test("Appends across chunk boundaries read back after a reopen, with the last commit's ends and head")
    func roundTrip() throws {
        let records = Self.records(Self.sizes, seed: 1)
        let (handle, all) = try Self.file(with: records)
        let reopened = try HealingLog(opening: Self.handle(try Self.bytes(of: handle)), headerKey: Self.key, epoch: 1)
        #expect(reopened.writtenEnd == all.count)
        #expect(reopened.committed?.committedEnd == UInt64(all.count))
        #expect(reopened.committed?.headSequence == UInt64(records.count))
        #expect(reopened.committed?.counter == UInt64(records.count))
        let read = try reopened.read(at: 0, count: all.count)
        #expect(read == all)
        #expect(try Self.bytes(of: handle).count == HealingLayout.physicalEnd(ofLog: all.count))
        // Appending after the reopen extends the parity computed from the log's bytes.
        let more = Self.records([30_000], seed: 2)[0]
        try reopened.append(more, committedEnd: all.count + more.count, headSequence: 99, headChain: Self.chain)
        for chunk in 0...((all.count + more.count - 1) / ChunkParity.dataLength) {
            let repaired = try reopened.repair(chunk: chunk)
            #expect(repaired.changedOffsets.isEmpty && repaired.unrepairedCodewords.isEmpty, "chunk \(chunk): parity matches")
        }
        let otherKey = SymmetricKey(data: [UInt8](repeating: 0x4C, count: 32))
        let underOtherKey = try HealingLog(opening: Self.handle(try Self.bytes(of: handle)), headerKey: otherKey, epoch: 1)
        #expect(underOtherKey.writtenEnd == 0, "under another key no slot reads")
        #expect(underOtherKey.appendRefusal != nil, "and with bytes in the log and no slot, nothing may be appended over them")
    }

    @Test("Any damaged 4 KiB region of the file after the header page is repaired, chunk by chunk")
    func anyRegionRepaired() throws {
        let records = Self.records(Self.sizes, seed: 3)
        let (handle, all) = try Self.file(with: records)
        let image = try Self.bytes(of: handle)
        let chunks = (all.count - 1) / ChunkParity.dataLength + 1
        var regions = 0
        for start in stride(from: HealingLayout.headerPageLength, to: image.count, by: 3_072) {
            var damaged = image
            for offset in start..<min(start + 4_096, damaged.count) { damaged[offset] ^= 0xA5 }
            let log = try HealingLog(opening: Self.handle(damaged), headerKey: Self.key, epoch: 1)
            #expect(log.writtenEnd == all.count, "region at \(start): a slot still reads")
            var repaired: [UInt8] = []
            for chunk in 0..<chunks {
                let result = try log.repair(chunk: chunk)
                #expect(result.unrepairedCodewords.isEmpty, "region at \(start), chunk \(chunk)")
                repaired += result.data
            }
            let same = repaired == all
            #expect(same, "region at \(start)")
            regions += 1
        }
        print("healing log: \(regions) damaged 4 KiB regions of a \(image.count)-byte file repaired")
    }

    @Test("A crash after any write of an append, or in the middle of one, leaves the last commit or the new one, whole")
    func crashAtEveryWrite() throws {
        let records = Self.records([350, 54_000, 2_000], seed: 4)
        let (handle, all) = try Self.file(with: records)
        let base = try Self.bytes(of: handle)
        // The next append crosses into chunk 1: its writes are the record's two pieces, chunk 0's parity and a slot.
        let recording = RecordingHandle(Self.handle(base))
        let log = try HealingLog(opening: recording, headerKey: Self.key, epoch: 1)
        let next = Self.records([5_000], seed: 5)[0]
        try log.append(next, committedEnd: all.count + next.count, headSequence: 4, headChain: Self.chain)
        let writes = recording.writes
        #expect(writes.count == 4, "piece, parity, piece, slot: \(writes.map(\.bytes.count))")
        var cases = 0
        for crashed in 0..<writes.count {
            for fraction in [0, 1, 2] {   // none, half, all of write `crashed` reached the file
                // (A torn slot write that spoiled both of its seal copies, as pages written out of order can, is
                // the case the two slots are for: the commit before must still stand. Modelled below by
                // corrupting the slot being written whole when the crash is inside it.)
                var image = base
                for write in writes[..<crashed] { Self.apply(write, to: &image) }
                let torn = writes[crashed]
                if crashed == writes.count - 1 && fraction == 1 {
                    // The slot write was torn so that neither copy of its seal reads.
                    Self.apply((torn.offset, [UInt8](repeating: 0x5A, count: torn.bytes.count)), to: &image)
                } else {
                    Self.apply((torn.offset, Array(torn.bytes.prefix(torn.bytes.count * fraction / 2))), to: &image)
                }
                let reopened = try HealingLog(opening: Self.handle(image), headerKey: Self.key, epoch: 1)
                let slotDone = crashed == writes.count - 1 && fraction == 2
                let expected = slotDone ? all + next : all
                #expect(reopened.writtenEnd == expected.count, "crash in write \(crashed) at \(fraction)/2")
                let read = try reopened.read(at: 0, count: expected.count)
                let same = read == expected
                #expect(same, "crash in write \(crashed) at \(fraction)/2")
                cases += 1
            }
        }
        #expect(cases == 12)
    }

    /// Applies one write to a file image, extending it as a write past the end would.
    static func apply(_ write: (offset: Int, bytes: [UInt8]), to image: inout [UInt8]) {
        if image.count < write.offset + write.bytes.count {
            image += [UInt8](repeating: 0, count: write.offset + write.bytes.count - image.count)
        }
        for (index, byte) in write.bytes.enumerated() { image[write.offset + index] = byte }
    }

    @Test("A slot whose write was torn between its seal copies was never acknowledged: with the other slot readable, the log is what that one says; alone, it gives the log's end but no parity")
    func tornSlotNotCounted() throws {
        let (handle, all) = try Self.file(with: Self.records([350, 9_000], seed: 15))
        let base = try Self.bytes(of: handle)
        let recording = RecordingHandle(Self.handle(base))
        let next = Self.records([2_000], seed: 16)[0]
        try HealingLog(opening: recording, headerKey: Self.key, epoch: 1)
            .append(next, committedEnd: all.count + next.count, headSequence: 3, headChain: Self.chain)
        // The record landed, and the first page of the slot (its first seal copy) but not the rest.
        var image = base
        Self.apply(recording.writes[0], to: &image)
        let slot = recording.writes[1]
        Self.apply((slot.offset, Array(slot.bytes.prefix(4_096))), to: &image)
        let log = try HealingLog(opening: Self.handle(image), headerKey: Self.key, epoch: 1)
        #expect(log.committed?.counter == 2 && log.writtenEnd == all.count, "the other slot's commit")
        #expect(log.appendRefusal == nil)
        // With the other slot lost too, the torn slot's newer seal gives the end; its parity is not used.
        var alone = image
        let other = HealingLayout.slotOffsets[0]
        for offset in other..<(other + CommitSlot.length) { alone[offset] = 0 }
        let lone = try HealingLog(opening: Self.handle(alone), headerKey: Self.key, epoch: 1)
        #expect(lone.committed?.counter == 3 && lone.writtenEnd == all.count + next.count)
        #expect(lone.newestParity == nil && lone.appendRefusal == .tailMismatch)
        #expect(try lone.repair(chunk: 0).unrepairedCodewords.count == ChunkParity.depth, "nothing proposed from a parity of unknown age")
    }

    @Test("A slot that reached the disk before its record and the file's new size: the log opens, refuses appends, and the slot's parity restores the record")
    func slotBeforeRecord() throws {
        let records = Self.records([350, 3_000], seed: 6)
        let (handle, all) = try Self.file(with: records)
        let base = try Self.bytes(of: handle)
        let recording = RecordingHandle(Self.handle(base))
        let log = try HealingLog(opening: recording, headerKey: Self.key, epoch: 1)
        let next = Self.records([2_000], seed: 7)[0]
        try log.append(next, committedEnd: all.count + next.count, headSequence: 3, headChain: Self.chain)
        var short = base
        Self.apply(recording.writes.last!, to: &short)              // the slot only; the file keeps its old size
        var padded = short
        padded += [UInt8](repeating: 0, count: HealingLayout.physicalEnd(ofLog: all.count + next.count) - padded.count)
        for (name, image) in [("old size", short), ("zeros to the new size", padded)] {
            let reopened = try HealingLog(opening: Self.handle(image), headerKey: Self.key, epoch: 1)
            #expect(reopened.writtenEnd == all.count + next.count, "\(name)")
            #expect(reopened.appendRefusal != nil || name != "old size", "\(name): appends wait for the repair")
            let repaired = try reopened.repair(chunk: 0)
            #expect(repaired.unrepairedCodewords.isEmpty, "\(name)")
            let same = repaired.data == all + next
            #expect(same, "\(name): the slot's parity proposes the record; its tags would confirm it")
        }
    }

    @Test("When the last write's bytes are missing and an acknowledged byte is damaged too: its range as erasures, then the older slot's parity")
    func lastWriteMissingAndDamage() throws {
        let (handle, all) = try Self.file(with: Self.records([4_000, 6_000], seed: 13))
        let base = try Self.bytes(of: handle)
        let recording = RecordingHandle(Self.handle(base))
        let log = try HealingLog(opening: recording, headerKey: Self.key, epoch: 1)
        let next = Self.records([6_000], seed: 14)[0]
        try log.append(next, committedEnd: all.count + next.count, headSequence: 3, headChain: Self.chain)
        var image = base
        Self.apply(recording.writes.last!, to: &image)      // the slot reached the disk; the record did not
        image += [UInt8](repeating: 0, count: HealingLayout.physicalEnd(ofLog: all.count + next.count) - image.count)
        image[HealingLayout.physical(100)] ^= 0x10          // and an acknowledged byte flipped
        let reopened = try HealingLog(opening: Self.handle(image), headerKey: Self.key, epoch: 1)
        let repaired = try reopened.repair(chunk: 0)
        #expect(repaired.unrepairedCodewords.isEmpty)
        let same = repaired.data == all + next
        #expect(same, "the last write's range as erasures: both the flip and the missing record are repaired")
        // The newest slot's parity lost too: the older slot's parity still repairs the acknowledged byte.
        var noParity = image
        let newestPlace = Int((reopened.committed?.counter ?? 0) % 2)
        let newestParity = HealingLayout.slotOffsets[newestPlace] + Seal.encodedLength
        for offset in newestParity..<(newestParity + ChunkParity.parityLength) { noParity[offset] = 0 }
        let withoutParity = try HealingLog(opening: Self.handle(noParity), headerKey: Self.key, epoch: 1)
        let fallback = try withoutParity.repair(chunk: 0)
        #expect(fallback.data[100] == all[100], "the acknowledged byte, from the older slot's parity")
        let acknowledged = Array(fallback.data[0..<all.count]) == all
        #expect(acknowledged)
        #expect(!fallback.unrepairedCodewords.isEmpty, "the last write's bytes are not claimed repaired")
    }

    @Test("A second writer's append is refused when another appended since it read the slots, and a failed append stops further ones")
    func secondWriterAndFailure() throws {
        let (handle, all) = try Self.file(with: Self.records([350, 9_000], seed: 10))
        let first = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        let second = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        try first.append([1, 2, 3], committedEnd: all.count + 3, headSequence: 3, headChain: Self.chain)
        #expect(throws: KeychainError.self) {
            try second.append([4, 5, 6], committedEnd: all.count + 3, headSequence: 3, headChain: Self.chain)
        }
        let reopened = try HealingLog(opening: handle, headerKey: Self.key, epoch: 1)
        #expect(reopened.writtenEnd == all.count + 3)
        #expect(try reopened.read(at: all.count, count: 3) == [1, 2, 3], "the first writer's record stands")
    }

    @Test("An unreadable sector in a commit slot costs that seal copy, not the open; the slots share no 4 KiB page")
    func unreadableSlotSector() throws {
        let (handle, all) = try Self.file(with: Self.records([350, 9_000, 20_000], seed: 11))
        let image = try Self.bytes(of: handle)
        for offset in HealingLayout.slotOffsets {
            for bad in [offset, offset + 4_096, offset + CommitSlot.length - 512] {
                let log = try HealingLog(opening: BadSectorHandle(Self.handle(image), unreadable: bad..<(bad + 512)), headerKey: Self.key, epoch: 1)
                #expect(log.writtenEnd == all.count, "bad sector at \(bad)")
            }
        }
        let pages = HealingLayout.slotOffsets.map { Set(($0 / 4_096)...(($0 + CommitSlot.length - 1) / 4_096)) }
        #expect(pages[0].isDisjoint(with: pages[1]))
        #expect(!pages[1].contains(HealingLayout.headerBOffset / 4_096))
    }

    /// A handle whose reads fail with EIO wherever they touch `unreadable` (physical offsets), as a disk's
    /// bad sectors do.
    final class BadSectorHandle: KeychainFileHandle, @unchecked Sendable {
        let inner: MemoryFileHandle
        let unreadable: Range<Int>
        var path: String { inner.path }
        var writeRefusal: Int32? { nil }
        init(_ inner: MemoryFileHandle, unreadable: Range<Int>) {
            self.inner = inner
            self.unreadable = unreadable
        }
        func linkCount() throws(KeychainError) -> Int { 1 }
        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(KeychainError) -> Int {
            if (offset..<(offset + buffer.count)).overlaps(unreadable) {
                throw .io(operation: "pread", errno: EIO, path: path)
            }
            return try inner.read(into: buffer, at: offset)
        }
        func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(KeychainError) -> Int { try inner.write(bytes, at: offset) }
        func size() throws(KeychainError) -> Int { try inner.size() }
        func truncate(to size: Int) throws(KeychainError) { try inner.truncate(to: size) }
        func sync() throws(KeychainError) { try inner.sync() }
        func identity() throws(KeychainError) -> FileIdentity { try inner.identity() }
        func close() { inner.close() }
    }

    @Test("8 KiB of sectors that cannot be read (EIO) — in a chunk's data, its parity, or the last chunk — are repaired as erasures")
    func unreadableSectors() throws {
        let (handle, all) = try Self.file(with: Self.records(Self.sizes, seed: 9))
        let image = try Self.bytes(of: handle)
        let lastChunk = (all.count - 1) / ChunkParity.dataLength
        let places = [
            HealingLayout.physical(10_000) / 512 * 512,                       // chunk 0's data
            HealingLayout.parityOffset(ofChunk: 1),                             // chunk 1's parity
            HealingLayout.physical(lastChunk * ChunkParity.dataLength + 4_096), // the last chunk's data
        ]
        for start in places {
            let bad = BadSectorHandle(Self.handle(image), unreadable: start..<(start + 8_192))
            let log = try HealingLog(opening: bad, headerKey: Self.key, epoch: 1)
            var repaired: [UInt8] = []
            for chunk in 0...lastChunk {
                let result = try log.repair(chunk: chunk)
                #expect(result.unrepairedCodewords.isEmpty, "8 KiB unreadable at \(start), chunk \(chunk)")
                repaired += result.data
            }
            let same = repaired == all
            #expect(same, "8 KiB unreadable at \(start)")
        }
        // The same 8 KiB damaged rather than unreadable is beyond what parity repairs without knowing where.
        var damaged = image
        for offset in places[0]..<(places[0] + 8_192) { damaged[offset] ^= 0x3C }
        let log = try HealingLog(opening: Self.handle(damaged), headerKey: Self.key, epoch: 1)
        #expect(!(try log.repair(chunk: 0)).unrepairedCodewords.isEmpty)
    }

    @Test("A file cut below its older commit is refused; cut only within the last write, it opens with that write to repair; a slot of another epoch is not read")
    func cutAndOtherEpoch() throws {
        let (handle, all) = try Self.file(with: Self.records([350, 9_000], seed: 8))
        let image = try Self.bytes(of: handle)
        let lastWrite = try HealingLog(opening: Self.handle(Array(image.dropLast(1))), headerKey: Self.key, epoch: 1)
        #expect(lastWrite.missingRange == 350..<9_350)
        #expect(lastWrite.appendRefusal != nil)
        let repaired = try lastWrite.repair(chunk: 0)
        let same = repaired.data == (try Self.file(with: Self.records([350, 9_000], seed: 8))).log
        #expect(same && repaired.unrepairedCodewords.isEmpty, "the missing byte is repaired as an erasure")
        #expect(throws: KeychainError.self) {
            _ = try HealingLog(opening: Self.handle(Array(image.dropLast(9_001))), headerKey: Self.key, epoch: 1)
        }
        let later = try HealingLog(opening: Self.handle(image), headerKey: Self.key, epoch: 2)
        #expect(later.writtenEnd == 0 && later.committed == nil)
        #expect(all.count == 9_350)
    }

    @Test("A seal in the place its counter does not name is not read; a writeBack keeps the stored parity of a codeword it could not repair")
    func misplacedSealAndWriteBack() throws {
        let (handle, all) = try Self.file(with: Self.records([350, 9_000, 20_000, 40_000], seed: 12))
        var image = try Self.bytes(of: handle)
        // Copy the newest slot (counter 4, place 0) over place 1: place 1 now holds a seal its counter does not name.
        let newest = Array(image[HealingLayout.slotOffsets[0]..<(HealingLayout.slotOffsets[0] + CommitSlot.length)])
        var misplaced = image
        misplaced.replaceSubrange(HealingLayout.slotOffsets[1]..<(HealingLayout.slotOffsets[1] + CommitSlot.length), with: newest)
        let log = try HealingLog(opening: Self.handle(misplaced), headerKey: Self.key, epoch: 1)
        #expect(log.older == nil && log.committed?.counter == 4, "only the seal in its own place is read")
        // 17 damaged symbols in codeword 5 of chunk 0 (complete: its parity is on disk after it), and one in codeword 9.
        for symbol in 0..<17 { image[HealingLayout.physical(symbol * 256 + 5)] ^= 0x5A }
        image[HealingLayout.physical(3 * 256 + 9)] ^= 0x01
        let damagedHandle = Self.handle(image)
        let damaged = try HealingLog(opening: damagedHandle, headerKey: Self.key, epoch: 1)
        let repair = try damaged.repair(chunk: 0)
        #expect(repair.unrepairedCodewords == [5])
        try damaged.writeBack(repair)
        let after = try HealingLog(opening: damagedHandle, headerKey: Self.key, epoch: 1)
        let again = try after.repair(chunk: 0)
        #expect(again.unrepairedCodewords == [5], "codeword 5 still unrepaired, its parity not made to agree with the damage")
        #expect(try after.read(at: 3 * 256 + 9, count: 1) == [all[3 * 256 + 9]], "codeword 9 written back")
    }
}
