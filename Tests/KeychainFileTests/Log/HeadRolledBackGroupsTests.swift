import Testing
@testable import KeychainFile

/// What a `rolledBack` message says of a version 3 pin's groups (SPEC.md §37.5): each case the heads alone show, and
/// none where only the file could.
@Suite("A rolledBack message names the pinned group the heads show rolled back")
struct HeadRolledBackGroupsTests {
    static let tag = [UInt8](repeating: 0xAA, count: 16)
    static let otherTag = [UInt8](repeating: 0xBB, count: 16)

    static func head(epoch: UInt64, _ groups: [(UInt8, UInt64, UInt64, [UInt8])]) -> Head {
        Head(epoch: epoch, sequence: 4, chainValue: [UInt8](repeating: 1, count: 16),
             groups: groups.map { Head.Group(keyID: $0.0, startEpoch: $0.1, sequence: $0.2, lastTag: $0.3) })
    }

    static let pin = head(epoch: 5, [(1, 5, 3, tag), (2, 4, 2, tag)])

    @Test("Each visible difference of group 2, in a later epoch", arguments: [
        ([(1, 5, 3, tag)], "key id 2, which the pinned head names, is not in the file"),
        ([(1, 5, 3, tag), (2, 3, 9, tag)], "key id 2 began in epoch 3 in the file, in epoch 4 at the pinned head"),
        ([(1, 5, 3, tag), (2, 4, 1, tag)], "key id 2 holds 1 page in the file, 2 at the pinned head"),
        ([(1, 5, 3, tag), (2, 4, 2, otherTag)], "key id 2 has another page 2 in the file than at the pinned head"),
    ] as [([(UInt8, UInt64, UInt64, [UInt8])], String)])
    func named(groups: [(UInt8, UInt64, UInt64, [UInt8])], words: String) throws {
        let found = Self.head(epoch: 6, groups)
        let text = try #require(found.rolledBackGroups(from: Self.pin))
        #expect(text.contains(words), "\(text)")
        #expect("\(KeychainError.rolledBack(expected: Self.pin, found: found))".contains(words))
    }

    @Test("Every group the heads show rolled back is named, in key id order")
    func severalNamed() throws {
        let found = Self.head(epoch: 6, [(1, 4, 3, Self.tag)])
        let text = try #require(found.rolledBackGroups(from: Self.pin))
        #expect(text == "the chain of the access group with key id 1 began in epoch 4 in the file, in epoch 5 at the pinned head; "
                + "the access group with key id 2, which the pinned head names, is not in the file (a group dropped, or an older key table put back)")
    }

    @Test("Nothing is named when the heads pass through the pin, began anew, are of the pin's epoch, or the pin names no group")
    func nothingNamed() {
        // Ahead on both groups (whether the pinned page is still there only the file shows), and group 2 begun anew.
        #expect(Self.head(epoch: 6, [(1, 5, 4, Self.otherTag), (2, 6, 0, Self.otherTag)]).rolledBackGroups(from: Self.pin) == nil)
        #expect(Self.head(epoch: 6, [(1, 5, 3, Self.tag), (2, 4, 2, Self.tag)]).rolledBackGroups(from: Self.pin) == nil)
        // The same epoch: the record chain decides (SPEC.md §15.4).
        #expect(Self.head(epoch: 5, [(1, 5, 3, Self.tag)]).rolledBackGroups(from: Self.pin) == nil)
        // A pin of version 1 or 2.
        #expect(Self.head(epoch: 6, []).rolledBackGroups(from: Self.head(epoch: 5, [])) == nil)
    }
}
