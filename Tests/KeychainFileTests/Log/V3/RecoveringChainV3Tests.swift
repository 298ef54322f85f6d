import Foundation
import Testing
@testable import KeychainFile

/// What a commit's heads do to a group's chain in a recovering read (SPEC.md §37.6 rule 5): they confirm the pages
/// held past damage when they agree with the chain, drop them when they put it elsewhere, and are refused when they
/// would put it behind a page that opened at a proven place — heads any holder of the log key can write.
@Suite("Format version 3: a recovering chain against a commit's heads")
struct RecoveringChainV3Tests {
    static let tags = (0..<10).map { [UInt8](repeating: UInt8(0x40 + $0), count: 16) }

    /// Group B's chain, proven at page 5.
    static func chainAtPageFive() -> RecoveringChainV3 {
        RecoveringChainV3(GroupChainV3(
            keys: RecordV3Fixture.b, at: GroupHeadV3(keyID: 2, startEpoch: 1, groupSequence: 5, lastTag: tags[5])))
    }

    static func head(_ sequence: UInt64, _ tag: [UInt8], startEpoch: UInt64 = 1) -> GroupHeadV3 {
        GroupHeadV3(keyID: 2, startEpoch: startEpoch, groupSequence: sequence, lastTag: tag)
    }

    /// Steps `chain` over a segment of group B that does not open, its tag as read `tag`, and holds one page after it.
    static func pageLost(_ chain: inout RecoveringChainV3, tag: [UInt8], holding offset: Int = 1_234) throws {
        let before = chain.sequence
        let box = [UInt8](repeating: 0x77, count: 284) + tag
        var writer = ByteWriter(capacity: 9)
        writer.writeUInt8(2)
        writer.writeUInt32(UInt32(box.count))
        writer.writeUInt32(UInt32(box.count))
        let bytes = writer.bytes + box
        let segment = try SegmentV3.read(bytes, at: 0, limit: bytes.count, base: 0, index: 0)
        var damaged: [DamagedSecretV3] = []
        #expect(chain.open(segment, in: bytes, place: "test", damagedSecrets: &damaged) == nil)
        #expect(!chain.isProven && chain.sequence == before + 1 && chain.lastTag == tag)
        chain.held.append(PageEntriesV3(offset: offset))
    }

    @Test("Heads behind a proven page, at it with another tag, or of another start epoch are refused, and the chain stays")
    func behindIsRefused() throws {
        for head in [Self.head(4, Self.tags[4]), Self.head(5, Self.tags[9]), Self.head(6, Self.tags[6], startEpoch: 2)] {
            var chain = Self.chainAtPageFive()
            guard case .refused = chain.synchronize(to: head) else {
                Issue.record("heads at page \(head.groupSequence) of start epoch \(head.startEpoch) were followed")
                continue
            }
            #expect(chain.sequence == 5 && chain.lastTag == Self.tags[5] && chain.isProven)
        }
        // Damage since does not make them acceptable: the page that opened at 5 is still proven.
        var chain = Self.chainAtPageFive()
        try Self.pageLost(&chain, tag: Self.tags[6])
        guard case .refused = chain.synchronize(to: Self.head(4, Self.tags[4])) else {
            Issue.record("heads behind a proven page were followed after damage")
            return
        }
        #expect(chain.held.count == 1 && chain.sequence == 6)
    }

    @Test("Heads that agree with a chain past damage confirm its held pages; heads that put it elsewhere drop them")
    func heldPages() throws {
        var agreeing = Self.chainAtPageFive()
        try Self.pageLost(&agreeing, tag: Self.tags[6])
        guard case .confirmed(let held) = agreeing.synchronize(to: Self.head(6, Self.tags[6])) else {
            Issue.record("heads that agree did not confirm")
            return
        }
        #expect(held.map(\.offset) == [1_234] && agreeing.held.isEmpty && agreeing.isProven)

        var disagreeing = Self.chainAtPageFive()
        try Self.pageLost(&disagreeing, tag: Self.tags[8])
        guard case .moved(let dropped) = disagreeing.synchronize(to: Self.head(7, Self.tags[7])) else {
            Issue.record("heads that disagree were not followed")
            return
        }
        #expect(dropped.map(\.offset) == [1_234])
        #expect(disagreeing.sequence == 7 && disagreeing.lastTag == Self.tags[7] && disagreeing.isProven && disagreeing.held.isEmpty)
    }

    @Test("Heads ahead of a chain that lost nothing since the last heads are refused: only a holder of the log key forging them makes such heads")
    func aheadOfUndamaged() {
        var chain = Self.chainAtPageFive()
        guard case .refused(ahead: true) = chain.synchronize(to: Self.head(8, Self.tags[8])) else {
            Issue.record("heads ahead of an undamaged chain were followed")
            return
        }
        #expect(chain.sequence == 5 && chain.lastTag == Self.tags[5] && chain.isProven)
    }

    @Test("A page held past one loss and cut off by a second can no longer be confirmed: heads agreeing with the chain's end confirm only what was held since the second")
    func secondLossAbandonsHeldPages() throws {
        var chain = Self.chainAtPageFive()
        try Self.pageLost(&chain, tag: Self.tags[6], holding: 1)
        // The second lost page's tag, as the file holds it, is the real chain's again.
        try Self.pageLost(&chain, tag: Self.tags[7], holding: 2)
        #expect(chain.abandoned.map(\.offset) == [1] && chain.held.map(\.offset) == [2])
        guard case .confirmed(let held) = chain.synchronize(to: Self.head(7, Self.tags[7])) else {
            Issue.record("heads that agree did not confirm")
            return
        }
        #expect(held.map(\.offset) == [2], "the page held before the second loss is not confirmed")
        #expect(chain.abandoned.map(\.offset) == [1], "it waits to be named")
    }
}
