import Testing
@testable import KeychainFile

@Suite("The lookup index: every definition finds its items, absent attributes as their defaults")
struct LookupIndexTests {
    private static func positions(_ candidates: LookupIndex.Candidates) -> Set<Int>? {
        switch candidates {
        case .unindexed: return nil
        case .none: return []
        case .one(let position): return [position]
        case .many(let positions): return Set(positions.map(Int.init))
        }
    }

    private static func candidates(
        _ index: LookupIndex, _ itemClass: ItemClass, _ values: [Attribute: StoredAttributeValue]
    ) -> Set<Int>? {
        positions(index.candidates(itemClass: itemClass) { values[$0] })
    }

    @Test("Longer and shorter definitions of each class, inserted, moved and removed")
    func definitions() throws {
        var index = LookupIndex()
        let items: [ItemAttributes] = [
            try GenericPassword(service: "mail", account: "ann", password: "").attributes,  // 0
            try GenericPassword(service: "mail", account: "bob", password: "").attributes,  // 1
            try GenericPassword(service: "web", account: "ann", password: "").attributes,  // 2
            try ItemAttributes(itemClass: .genericPassword, values: [.service: .string("web")]),  // 3: account ""
            try InternetPassword(server: "mail", account: "ann", password: "").attributes,  // 4: same values, other class
            try ItemAttributes(itemClass: .key, values: [.applicationLabel: .bytes([1, 2])]),  // 5
            try ItemAttributes(itemClass: .certificate, values: [.issuer: .bytes([3]), .serialNumber: .bytes([4])]),  // 6
        ]
        for (position, attributes) in items.enumerated() { index.insert(position, attributes) }

        #expect(Self.candidates(index, .genericPassword, [.service: .string("mail"), .account: .string("ann")]) == [0])
        #expect(Self.candidates(index, .genericPassword, [.service: .string("mail")]) == [0, 1])
        #expect(Self.candidates(index, .genericPassword, [.service: .string("web"), .account: .string("")]) == [3])
        #expect(Self.candidates(index, .genericPassword, [.service: .string("web")]) == [2, 3])
        #expect(Self.candidates(index, .genericPassword, [.service: .string("none")]) == [])
        #expect(Self.candidates(index, .genericPassword, [.account: .string("ann")]) == nil)
        #expect(Self.candidates(index, .internetPassword, [.server: .string("mail"), .account: .string("ann")]) == [4])
        #expect(Self.candidates(index, .internetPassword, [.server: .string("mail")]) == [4])
        #expect(Self.candidates(index, .key, [.applicationLabel: .bytes([1, 2])]) == [5])
        #expect(Self.candidates(index, .certificate, [.issuer: .bytes([3]), .serialNumber: .bytes([4])]) == [6])
        #expect(Self.candidates(index, .certificate, [.issuer: .bytes([3])]) == nil)

        index.move(items[1], from: 1, to: 9)
        #expect(Self.candidates(index, .genericPassword, [.service: .string("mail")]) == [0, 9])
        #expect(Self.candidates(index, .genericPassword, [.service: .string("mail"), .account: .string("bob")]) == [9])
        index.remove(0, items[0])
        #expect(Self.candidates(index, .genericPassword, [.service: .string("mail")]) == [9])
        #expect(Self.candidates(index, .genericPassword, [.service: .string("mail"), .account: .string("ann")]) == [])
    }
}
