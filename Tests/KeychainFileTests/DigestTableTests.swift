import Testing
@testable import KeychainFile

/// DigestTable against a dictionary of sets doing the same operations: random inserts, removals and moves,
/// with digests drawn from a small pool (so many share a digest) and from a wide one, through growth and
/// backward-shift deletions.
@Suite("Digest table: the same answers as a dictionary of sets")
struct DigestTableTests {
    private static func check(_ table: DigestTable, _ model: [Int: Set<Int>], _ digests: some Sequence<Int>) {
        for digest in digests {
            let expected = model[digest] ?? []
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
        var model: [Int: Set<Int>] = [:]
        var touched: Set<Int> = []
        for step in 0..<20_000 {
            // A small pool makes digests repeat (many positions per digest); the rest are wide and distinct.
            let digest = Bool.random(using: &generator)
                ? Int.random(in: -8...8, using: &generator)
                : Int.random(in: Int.min...Int.max, using: &generator)
            let position = Int.random(in: 0..<5_000, using: &generator)
            touched.insert(digest)
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<5:
                table.insert(digest, position)
                model[digest, default: []].insert(position)
            case 5..<8:
                // Mostly positions the digest has, so that removals happen.
                let victim = model[digest]?.randomElement(using: &generator) ?? position
                table.remove(digest, victim)
                model[digest]?.remove(victim)
                if model[digest]?.isEmpty == true { model[digest] = nil }
            default:
                guard let old = model[digest]?.randomElement(using: &generator) else { continue }
                guard model[digest]?.contains(position) != true else { continue }
                table.move(digest, from: old, to: position)
                model[digest]?.remove(old)
                model[digest]?.insert(position)
            }
            if step % 997 == 0 { Self.check(table, model, touched) }
        }
        Self.check(table, model, touched)
        // Empty it completely: every slot is found again after all the shifting.
        for (digest, positions) in model {
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
}
