import Testing
@testable import KeychainFile

/// A 64 KiB block with 32 parity symbols per codeword at depth 294, the least depth that fits (⌈65,536 /
/// 294⌉ = 223 data symbols): a whole damaged 4 KiB sector costs each codeword at most ⌈4,096 / 294⌉ = 14
/// symbols, within the 16 errors at unknown positions that 32 parity symbols repair. The parity block is
/// 32 × 294 = 9,408 bytes, 14.4 % of the block.
@Suite("Healing: interleaved parity repairs a whole damaged 4 KiB sector")
struct InterleavedParityTests {
    static let blockLength = 65_536
    static let depth = 294
    static let sector = 4_096

    static func layout() throws -> InterleavedParity {
        try InterleavedParity(paritySymbols: 32, depth: depth, blockLength: blockLength)
    }

    static func block(seed: UInt64) -> [UInt8] {
        var random = TestRandom(seed: seed)
        return (0..<blockLength).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    /// The first offset where `a` and `b` differ (or the shorter length), nil when they are equal.
    static func firstDifference(_ a: [UInt8], _ b: [UInt8]) -> Int? {
        a.count != b.count ? min(a.count, b.count) : a.indices.first { a[$0] != b[$0] }
    }

    @Test("The layout: symbol i of codeword j at offset i·depth + j, and the parity overhead")
    func layoutAndOverhead() throws {
        let layout = try Self.layout()
        #expect(layout.parityLength == 9_408)
        #expect(Double(layout.parityLength) / Double(Self.blockLength) < 0.15)
        #expect(layout.dataSymbols(ofCodeword: 0) == 223)
        #expect(layout.dataSymbols(ofCodeword: 293) == 222)
        #expect((0..<Self.depth).map(layout.dataSymbols(ofCodeword:)).reduce(0, +) == Self.blockLength)
        // Each codeword's parity is its own symbols' parity, written with the same stride.
        let block = Self.block(seed: 1)
        let parity = try layout.parity(of: block)
        let code = try ReedSolomonCode(paritySymbols: 32)
        for j in [0, 1, 150, 293] {
            let symbols = stride(from: j, to: Self.blockLength, by: Self.depth).map { block[$0] }
            let expected = try code.parity(of: symbols)
            #expect(stride(from: j, to: parity.count, by: Self.depth).map { parity[$0] } == expected, "codeword \(j)")
        }
        #expect(throws: ReedSolomonError.self) { try InterleavedParity(paritySymbols: 32, depth: 293, blockLength: Self.blockLength) }
    }

    @Test("A damaged 4 KiB sector is repaired at every 512-byte alignment and at every alignment modulo the depth")
    func damagedSectorAtEveryAlignment() throws {
        let layout = try Self.layout()
        let original = Self.block(seed: 2)
        let parity = try layout.parity(of: original)
        var random = TestRandom(seed: 3)
        let rows = Self.blockLength / Self.depth
        var starts = Array(stride(from: 0, through: Self.blockLength - Self.sector, by: 512))
        // One start in each residue class modulo the depth, at rows spread over the block.
        starts += (0..<Self.depth).map { residue in residue + Self.depth * ((residue * 37) % (rows - 14)) }
        for (index, start) in starts.enumerated() {
            var block = original
            var parityCopy = parity
            // Random garbage, or a sector of zeros (a dropped write) every third time.
            for offset in start..<(start + Self.sector) {
                block[offset] = index % 3 == 2 ? 0 : UInt8.random(in: 0...255, using: &random)
            }
            let damaged = (start..<(start + Self.sector)).filter { block[$0] != original[$0] }
            let repair = try layout.repair(block: &block, parity: &parityCopy)
            // Compared through the first differing offset: a failure prints a number, not 64 KiB.
            #expect(repair.unrepairedCodewords.isEmpty, "sector at \(start)")
            #expect(Self.firstDifference(block, original) == nil, "sector at \(start)")
            #expect(repair.blockOffsets == damaged, "sector at \(start)")
            #expect(repair.parityOffsets.isEmpty && Self.firstDifference(parityCopy, parity) == nil)
        }
    }

    @Test("A damaged sector inside the parity block is repaired too, and an undamaged block needs nothing")
    func damagedParity() throws {
        let layout = try Self.layout()
        let original = Self.block(seed: 4)
        let parity = try layout.parity(of: original)
        var block = original
        var clean = parity
        #expect(try layout.repair(block: &block, parity: &clean).blockOffsets.isEmpty)
        for start in [0, 1, 2_000, parity.count - Self.sector] {
            var damagedParity = parity
            for offset in start..<(start + Self.sector) { damagedParity[offset] ^= 0xA5 }
            let repair = try layout.repair(block: &block, parity: &damagedParity)
            #expect(Self.firstDifference(damagedParity, parity) == nil, "parity sector at \(start)")
            #expect(Self.firstDifference(block, original) == nil, "parity sector at \(start)")
            #expect(repair.parityOffsets == Array(start..<(start + Self.sector)))
        }
    }

    @Test("Two damaged sectors exceed some codewords' reach: those are listed, left as they were, and the rest repaired")
    func beyondReachIsReported() throws {
        let layout = try Self.layout()
        let original = Self.block(seed: 5)
        let parity = try layout.parity(of: original)
        var block = original
        var parityCopy = parity
        // 8 KiB of garbage: 27 or 28 symbols in every codeword, beyond 16.
        var random = TestRandom(seed: 6)
        for offset in 10_000..<(10_000 + 2 * Self.sector) { block[offset] ^= UInt8.random(in: 1...255, using: &random) }
        let damagedBlock = block
        let repair = try layout.repair(block: &block, parity: &parityCopy)
        #expect(repair.unrepairedCodewords.count == Self.depth)
        #expect(Self.firstDifference(block, damagedBlock) == nil && Self.firstDifference(parityCopy, parity) == nil)
    }

    @Test("Wrong buffer lengths and layouts that do not fit give typed errors")
    func hostileLengths() throws {
        let layout = try Self.layout()
        #expect(throws: ReedSolomonError.self) { try layout.parity(of: [UInt8](repeating: 0, count: Self.blockLength - 1)) }
        var block = [UInt8](repeating: 0, count: Self.blockLength)
        var parity = [UInt8](repeating: 0, count: layout.parityLength + 1)
        #expect(throws: ReedSolomonError.self) { try layout.repair(block: &block, parity: &parity) }
        var short: [UInt8] = []
        parity = [UInt8](repeating: 0, count: layout.parityLength)
        #expect(throws: ReedSolomonError.self) { try layout.repair(block: &short, parity: &parity) }
        for (depth, length) in [(0, 10), (-1, 10), (Int.max, 10), (1, 224), (1, -1), (4, 4 * 223 + 1)] {
            #expect(throws: ReedSolomonError.self, "depth \(depth), length \(length)") {
                try InterleavedParity(paritySymbols: 32, depth: depth, blockLength: length)
            }
        }
        // An empty block is allowed: its parity is all zero.
        let empty = try InterleavedParity(paritySymbols: 4, depth: 3, blockLength: 0)
        #expect(try empty.parity(of: []) == [UInt8](repeating: 0, count: 12))
    }
}
