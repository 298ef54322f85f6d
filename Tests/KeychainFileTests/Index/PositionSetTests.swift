import Testing
@testable import KeychainFile

/// PositionSet against the standard library's Set doing the same operations: random inserts and removals
/// through growth and backward-shift deletions, and the shapes a service's positions take (runs and strides).
@Suite("Position set: the same answers as Set<UInt32>")
struct PositionSetTests {
    private static func check(_ set: PositionSet, _ model: Set<UInt32>, _ probes: some Sequence<UInt32>) {
        #expect(set.count == model.count)
        #expect(set.isEmpty == model.isEmpty)
        var seen: Set<UInt32> = []
        for position in set { #expect(seen.insert(position).inserted, "\(position) iterated twice") }
        #expect(seen == model, "iteration gives exactly the positions")
        for probe in probes { #expect(set.contains(probe) == model.contains(probe), "contains \(probe)") }
        if let first = set.first { #expect(model.contains(first)) } else { #expect(model.isEmpty) }
    }

    @Test("Random inserts and removals over 30,000 steps match the model after every few steps")
    func randomOperations() {
        var generator = TestRandom(seed: 0x5E7)
        var set = PositionSet()
        var model: Set<UInt32> = []
        for step in 0..<30_000 {
            // Positions from a range small enough that inserts meet present positions and removals find them.
            let position = UInt32.random(in: 0..<3_000, using: &generator)
            if Int.random(in: 0..<10, using: &generator) < 6 {
                let inserted = set.insert(position)
                #expect(inserted == model.insert(position).inserted)
            } else {
                let removed = set.remove(position)
                #expect(removed == model.remove(position))
            }
            if step % 499 == 0 { Self.check(set, model, 0..<3_000) }
        }
        Self.check(set, model, 0..<3_000)
        for position in model { set.remove(position) }
        Self.check(set, [], 0..<3_000)
    }

    @Test("Strides and runs of positions (a service's items) go in, are found and come out")
    func stridesAndRuns() {
        for stride in [1, 2, 64, 1_024, 65_536] {
            var set = PositionSet()
            let positions = (0..<5_000).map { UInt32($0 * stride % Int(Int32.max)) }
            for position in positions {
                let inserted = set.insert(position)
                #expect(inserted)
            }
            Self.check(set, Set(positions), positions.prefix(100))
            // Every other one out, then the rest: every remaining position is still found after the shifts.
            for position in positions.enumerated().filter({ $0.offset % 2 == 0 }).map(\.element) {
                let removed = set.remove(position)
                #expect(removed != nil)
            }
            Self.check(set, Set(positions.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)), positions.prefix(100))
            for position in positions { set.remove(position) }
            #expect(set.isEmpty && set.first == nil, "stride \(stride)")
        }
    }

    @Test("An empty set has no slots; one emptied of most positions shrinks, so that iterating it stays cheap")
    func capacityFollowsCount() {
        var set = PositionSet()
        #expect(set.capacity == 0 && set.first == nil && !set.contains(0))
        for position in UInt32(0)..<100_000 { set.insert(position) }
        #expect(set.capacity >= 100_000 * 4 / 3)
        for position in UInt32(2)..<100_000 { set.remove(position) }
        #expect(set.count == 2 && set.contains(0) && set.contains(1))
        #expect(set.capacity <= 16, "capacity \(set.capacity) for two positions")
        #expect(Set(set) == [0, 1])
    }

    @Test("Equal when the positions are, in whatever order they went in; an array literal makes a set")
    func equality() {
        var forward = PositionSet()
        var backward = PositionSet()
        for position in UInt32(0)..<200 { forward.insert(position) }
        for position in (UInt32(0)..<200).reversed() { backward.insert(position) }
        #expect(forward == backward)
        backward.remove(17)
        #expect(forward != backward)
        let literal: PositionSet = [3, 9, 3]
        #expect(literal.count == 2 && literal.contains(3) && literal.contains(9) && !literal.contains(4))
    }
}
