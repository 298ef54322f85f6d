import Foundation
import KeychainCrypto
import Testing
@testable import KeychainFile

/// Format version 2's seals and commit slots (Docs/FormatVersion2.md §3): authenticated, readable through
/// damage their parity covers, never through more, and the newer of two slots chosen by its counter.
@Suite("Healing: seals and commit slots")
struct CommitSlotTests {
    static let key = SymmetricKey(data: [UInt8](repeating: 0x4B, count: 32))
    static let otherKey = SymmetricKey(data: [UInt8](repeating: 0x4C, count: 32))

    static func seal(counter: UInt64 = 7) -> Seal {
        Seal(
            epoch: 3, counter: counter, writtenEnd: 123_456, committedEnd: 120_000, headSequence: 42,
            headChain: (0..<16).map { UInt8($0 &* 11 &+ 5) })
    }

    static func slot(counter: UInt64 = 7, seed: UInt64 = 1) -> CommitSlot {
        var random = TestRandom(seed: seed)
        let chunk = (0..<20_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        return CommitSlot(seal: seal(counter: counter), parity: ChunkParity(chunk: chunk))
    }

    @Test("A seal reads back as written, and not under another key")
    func sealRoundTrip() {
        let bytes = Self.seal().encoded(headerKey: Self.key)
        #expect(bytes.count == Seal.encodedLength)
        #expect(Seal.decode(bytes, headerKey: Self.key) == Self.seal())
        #expect(Seal.decode(bytes, headerKey: Self.otherKey) == nil)
        #expect(Seal.decode(bytes.dropLast(), headerKey: Self.key) == nil)
    }

    @Test("A seal with up to 16 damaged bytes anywhere reads; with 17, never as something else", arguments: 0..<40)
    func sealThroughDamage(trial: Int) {
        let bytes = Self.seal().encoded(headerKey: Self.key)
        var random = TestRandom(seed: UInt64(trial))
        let positions = Array((0..<Seal.encodedLength).shuffled(using: &random))
        var damaged = bytes
        for position in positions.prefix(16) { damaged[position] ^= UInt8.random(in: 1...255, using: &random) }
        #expect(Seal.decode(damaged, headerKey: Self.key) == Self.seal(), "16 damaged bytes, trial \(trial)")
        damaged[positions[16]] ^= 0x80
        let beyond = Seal.decode(damaged, headerKey: Self.key)
        #expect(beyond == nil || beyond == Self.seal(), "17 damaged bytes give nothing or the seal, never another")
    }

    @Test("Every single flipped bit of a seal is repaired; a seal whose MAC was recomputed under another key is refused")
    func everyBitAndForgery() {
        let bytes = Self.seal().encoded(headerKey: Self.key)
        for bit in 0..<(8 * Seal.encodedLength) {
            var flipped = bytes
            flipped[bit / 8] ^= 1 << UInt8(bit % 8)
            #expect(Seal.decode(flipped, headerKey: Self.key) == Self.seal(), "bit \(bit)")
        }
        let forged = Self.seal(counter: 8).encoded(headerKey: Self.otherKey)
        #expect(Seal.decode(forged, headerKey: Self.key) == nil)
    }

    @Test("A slot reads back with its parity; either seal copy alone is enough; both lost, or zeros, read as nothing")
    func slotCopies() {
        let slot = Self.slot()
        let bytes = slot.encoded(headerKey: Self.key)
        #expect(bytes.count == CommitSlot.length)
        #expect(CommitSlot.decode(bytes, headerKey: Self.key) == slot)
        var firstLost = bytes
        for index in 0..<Seal.encodedLength { firstLost[index] = 0 }
        #expect(CommitSlot.decode(firstLost, headerKey: Self.key)?.seal == slot.seal)
        var secondLost = bytes
        for index in (CommitSlot.length - Seal.encodedLength)..<CommitSlot.length { secondLost[index] = 0xFF }
        #expect(CommitSlot.decode(secondLost, headerKey: Self.key)?.seal == slot.seal)
        var bothLost = firstLost
        for index in (CommitSlot.length - Seal.encodedLength)..<CommitSlot.length { bothLost[index] = 0xFF }
        #expect(CommitSlot.decode(bothLost, headerKey: Self.key) == nil)
        #expect(CommitSlot.decode([UInt8](repeating: 0, count: CommitSlot.length), headerKey: Self.key) == nil)
        #expect(CommitSlot.decode(Array(bytes.dropLast()), headerKey: Self.key) == nil)
    }

    @Test("Any damaged 4 KiB region of a slot leaves a seal that reads")
    func slotThroughAnyRegion() {
        let slot = Self.slot()
        let bytes = slot.encoded(headerKey: Self.key)
        for start in stride(from: 0, to: CommitSlot.length, by: 128) {
            var damaged = bytes
            for index in start..<min(start + 4_096, damaged.count) { damaged[index] = 0 }
            #expect(CommitSlot.decode(damaged, headerKey: Self.key)?.seal == slot.seal, "region from \(start)")
        }
    }

    @Test("A slot write torn between its copies reads as the newer seal, marked torn; a whole slot, or one with a copy lost, is not")
    func tornSlotWrite() {
        let older = Self.slot(counter: 5).encoded(headerKey: Self.key)
        let newer = Self.slot(counter: 7, seed: 2).encoded(headerKey: Self.key)
        // The write reached the first seal copy and part of the parity, not the second copy.
        let torn = Array(newer[0..<4_000] + older[4_000...])
        #expect(CommitSlot.decode(torn, headerKey: Self.key)?.seal.counter == 7)
        #expect(CommitSlot.decode(torn, headerKey: Self.key)?.isTorn == true)
        #expect(CommitSlot.decode(newer, headerKey: Self.key)?.isTorn == false)
        let copyLost = Array(newer[0..<(CommitSlot.length - Seal.encodedLength)]) + [UInt8](repeating: 0, count: Seal.encodedLength)
        #expect(CommitSlot.decode(copyLost, headerKey: Self.key)?.isTorn == false)
    }

    @Test("The newer of two slots is the one with the higher counter, whichever place it is in")
    func newestOfTwo() {
        let five = Self.slot(counter: 5)
        let six = Self.slot(counter: 6)
        #expect(CommitSlot.newest(five, six).newest == six)
        #expect(CommitSlot.newest(six, five).newest == six)
        #expect(CommitSlot.newest(six, five).older == five)
        #expect(CommitSlot.newest(nil, five).newest == five)
        #expect(CommitSlot.newest(nil, five).older == nil)
        #expect(CommitSlot.newest(nil, nil).newest == nil)
    }

    @Test("Random bytes never read as a slot, and never trap")
    func garbage() {
        var random = TestRandom(seed: 77)
        for _ in 0..<200 {
            let bytes = (0..<CommitSlot.length).map { _ in UInt8.random(in: 0...255, using: &random) }
            #expect(CommitSlot.decode(bytes, headerKey: Self.key) == nil)
        }
    }
}
