import Testing
@testable import KeychainFile

/// DigestTable against a dictionary of sets doing the same operations: random inserts, removals and moves,
/// with digests drawn from a small pool (so many share a digest) and from a wide one, through growth and
/// backward-shift deletions. The model is keyed as the table is, by the 32-bit key each digest folds to
/// (``DigestTable/key(_:)``): digests that share a key share positions.
@Suite("Digest table: the same answers as a dictionary of sets")
struct DigestTableTests {
    private static func check(_ table: DigestTable, _ model: [UInt32: Set<Int>], _ digests: some Sequence<Int>) {
        for digest in digests {
            let expected = model[DigestTable.key(digest)] ?? []
            let actual: Set<Int>
            switch table.positions(digest) {
            case .none: actual = []
            case .one(let position): actual = [position]
            case .many(let positions):
                actual = Set(positions.map(Int.init))
                #expect(positions.count > 1, "a set of one is kept in the slot")
            }
            #expect(actual == expected, "digest \(digest)")
        }
        #expect(table.digestCount == model.values.filter { !$0.isEmpty }.count)
    }

    @Test("Random operations over 20,000 steps, shared and distinct digests, match the model after every step")
    func randomOperations() {
        var generator = TestRandom(seed: 0xD16E_57)
        var table = DigestTable()
        var model: [UInt32: Set<Int>] = [:]
        var touched: Set<Int> = []
        for step in 0..<20_000 {
            // A small pool makes digests repeat (many positions per digest, and keys shared by two digests: -1
            // folds to 0's key, -2 to 1's); the rest are wide and distinct.
            let digest = Bool.random(using: &generator)
                ? Int.random(in: -8...8, using: &generator)
                : Int.random(in: Int.min...Int.max, using: &generator)
            let key = DigestTable.key(digest)
            let position = Int.random(in: 0..<5_000, using: &generator)
            touched.insert(digest)
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<5:
                table.insert(digest, position)
                model[key, default: []].insert(position)
            case 5..<8:
                // Mostly positions the digest has, so that removals happen.
                let victim = model[key]?.randomElement(using: &generator) ?? position
                table.remove(digest, victim)
                model[key]?.remove(victim)
                if model[key]?.isEmpty == true { model[key] = nil }
            default:
                guard let old = model[key]?.randomElement(using: &generator) else { continue }
                guard model[key]?.contains(position) != true else { continue }
                table.move(digest, from: old, to: position)
                model[key]?.remove(old)
                model[key]?.insert(position)
            }
            if step % 997 == 0 { Self.check(table, model, touched) }
        }
        Self.check(table, model, touched)
        // Empty it completely: every slot is found again after all the shifting (any digest with the key will do).
        for (key, positions) in model {
            let digest = touched.first { DigestTable.key($0) == key }!
            for position in positions { table.remove(digest, position) }
        }
        Self.check(table, [:], touched)
    }

    @Test("Digests with the same home slot: removing from the middle of a run keeps the rest findable")
    func sameHome() {
        var table = DigestTable()
        table.reserveCapacity(forMore: 64)
        // Consecutive small digests share home slot 0 (home = digest × capacity / 2⁶⁴).
        for digest in 1...40 { table.insert(digest, digest) }
        for digest in stride(from: 1, through: 40, by: 3) { table.remove(digest, digest) }
        for digest in 1...40 {
            let expected: DigestTable.Positions = (digest - 1) % 3 == 0 ? .none : .one(digest)
            #expect(table.positions(digest) == expected, "digest \(digest)")
        }
    }

    @Test("A digest is kept under its two halves XORed: digests that fold to one key share its positions, others do not")
    func foldedKeys() {
        #expect(DigestTable.key(0x1234_5678_0000_0001) == 0x1234_5679)
        #expect(DigestTable.key(-1) == DigestTable.key(0))
        var table = DigestTable()
        let digest = 0x0123_4567_89AB_CDEF
        // The same key: both halves changed by the same bits.
        let twin = digest ^ 0x0000_00F0_0000_00F0
        #expect(DigestTable.key(twin) == DigestTable.key(digest))
        table.insert(digest, 7)
        #expect(table.positions(twin) == .one(7))
        table.insert(twin, 9)
        #expect(table.positions(digest) == .many([7, 9]))
        #expect(table.digestCount == 1)
        // Another key: one half changed.
        #expect(table.positions(digest ^ 0xF0) == .none)
        table.remove(twin, 7)
        #expect(table.positions(digest) == .one(9))
    }
}
