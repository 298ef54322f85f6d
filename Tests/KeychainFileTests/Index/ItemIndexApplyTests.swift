import Foundation
import Testing
@testable import KeychainFile

/// `ItemIndex.apply` takes records made only of new items (bulk loads, compacted files) without planning
/// them; these tests check that it accepts and rejects exactly what the planned path does, and that a
/// rejected record leaves the index as it was.
@Suite("Item index: records of new items")
struct ItemIndexApplyTests {
    private static func id(_ value: UInt8) -> ItemID {
        try! ItemID(bytes: [UInt8](repeating: value, count: 16))
    }

    private static func put(_ id: ItemID, account: String, bytes: Int = 100) -> DecodedEntry {
        let attributes = try! GenericPassword(service: "s", account: account, password: "").attributes
        let secret = SealedSecret(
            box: [], sequence: 1, kind: .transaction, entryCount: 0, entryIndex: 0, previousChain: [], entryByteCount: bytes)
        return .put(id: id, attributes: attributes, secret: secret)
    }

    /// Everything about the index a search or the statistics can see.
    private static func snapshot(_ index: ItemIndex) throws -> String {
        let items = try index.matching(Query(.genericPassword, synchronizable: .any))
        let listed = items.map { "\($0.id) \($0.order) \($0.attributes.string(.account) ?? "")" }
        return "\(index.count) \(index.nextOrder) \(index.liveEntryBytes) \(listed)"
    }

    private static func seeded() throws -> ItemIndex {
        var index = ItemIndex()
        try index.apply([put(id(1), account: "a"), put(id(2), account: "b")])
        return index
    }

    @Test("New items go in, in record order, found by their lookups and primary keys")
    func newItems() throws {
        var index = try Self.seeded()
        try index.apply([Self.put(Self.id(3), account: "c"), Self.put(Self.id(4), account: "d")])
        #expect(index.count == 4)
        #expect(index[Self.id(3)]?.order == 2)
        #expect(index[Self.id(4)]?.order == 3)
        #expect(index.liveEntryBytes == 400)
        let found = try index.matching(.genericPassword(service: "s", account: "d"))
        #expect(found.map(\.id) == [Self.id(4)])
        let key = try GenericPassword(service: "s", account: "c", password: "").attributes.withDefaults().primaryKey
        #expect(index.itemID(for: key) == Self.id(3))
    }

    @Test("A primary key already live, or given twice in the record, rejects the whole record and changes nothing")
    func duplicateKeys() throws {
        var index = try Self.seeded()
        let before = try Self.snapshot(index)
        #expect(throws: IndexConflict.duplicatePrimaryKey(Self.id(4))) {
            try index.apply([Self.put(Self.id(3), account: "c"), Self.put(Self.id(4), account: "a"), Self.put(Self.id(5), account: "e")])
        }
        #expect(try Self.snapshot(index) == before)
        #expect(throws: IndexConflict.self) {
            try index.apply([Self.put(Self.id(3), account: "c"), Self.put(Self.id(4), account: "d"), Self.put(Self.id(5), account: "c")])
        }
        #expect(try Self.snapshot(index) == before)
        // The index still takes the items it refused once the record is valid.
        try index.apply([Self.put(Self.id(3), account: "c"), Self.put(Self.id(4), account: "d")])
        #expect(index.count == 4)
        #expect(index[Self.id(3)]?.order == 2)
    }

    @Test("An id given twice, or one already live, is left to the planned path: the last put wins")
    func repeatedIDs() throws {
        var index = try Self.seeded()
        try index.apply([Self.put(Self.id(3), account: "c"), Self.put(Self.id(3), account: "c2"), Self.put(Self.id(1), account: "a2")])
        #expect(index.count == 3)
        #expect(index[Self.id(3)]?.attributes.string(.account) == "c2")
        #expect(index[Self.id(3)]?.order == 2)
        #expect(index[Self.id(1)]?.attributes.string(.account) == "a2")
        #expect(index[Self.id(1)]?.order == 0)
        #expect(try index.matching(.genericPassword(service: "s", account: "c")).isEmpty)
        #expect(try index.matching(.genericPassword(service: "s", account: "a")).isEmpty)
    }

    @Test("Deletions in any position leave every other item found by id, primary key and lookup, in added order")
    func deletionsKeepPositions() throws {
        var index = ItemIndex()
        try index.apply((1...40).map { Self.put(Self.id(UInt8($0)), account: "a\($0)") })
        // First, last, middle, then a record that deletes several and adds one.
        try index.apply([.delete(id: Self.id(1))])
        try index.apply([.delete(id: Self.id(40))])
        try index.apply([.delete(id: Self.id(20))])
        try index.apply([.delete(id: Self.id(2)), .delete(id: Self.id(39)), Self.put(Self.id(41), account: "a41"), .delete(id: Self.id(3))])
        let deleted: Set<Int> = [1, 2, 3, 20, 39, 40]
        let live = (1...41).filter { !deleted.contains($0) }
        #expect(index.count == live.count)
        for value in 1...41 {
            let id = Self.id(UInt8(value))
            let account = "a\(value)"
            let key = try GenericPassword(service: "s", account: account, password: "").attributes.withDefaults().primaryKey
            if deleted.contains(value) {
                #expect(index[id] == nil)
                #expect(index.itemID(for: key) == nil)
                #expect(try index.matching(.genericPassword(service: "s", account: account)).isEmpty)
            } else {
                #expect(index[id]?.attributes.string(.account) == account)
                #expect(index.itemID(for: key) == id)
                #expect(try index.matching(.genericPassword(service: "s", account: account)).map(\.id) == [id])
            }
        }
        #expect(index.itemsInAddedOrder().map(\.id) == live.map { Self.id(UInt8($0)) })
        #expect(index.liveEntryBytes == 100 * live.count)
    }

    @Test("Positions in added order, whether few or most of the items ever added are gone")
    func positionsInAddedOrder() throws {
        // Deleting from the front moves the last items into the holes, so positions and order differ. With 8
        // of 50 deleted the order numbers span less than 4 per live item (placed by order); with 46 of them,
        // the first item kept, they do not (sorted).
        let deletedSets: [[Int]] = [(1...10).filter { $0 % 5 != 0 }, Array(2...47)]
        for deleted in deletedSets {
            var index = ItemIndex()
            try index.apply((1...50).map { Self.put(Self.id(UInt8($0)), account: "a\($0)") })
            for value in deleted { try index.apply([.delete(id: Self.id(UInt8(value)))]) }
            try index.apply([Self.put(Self.id(51), account: "a51")])
            let positions = index.positionsInAddedOrder()
            #expect(Set(positions).count == index.count && positions.allSatisfy { (0..<index.count).contains(Int($0)) })
            let ids = positions.map { index.item(atPosition: Int($0)).id }
            #expect(ids == index.itemsInAddedOrder().map(\.id), "\(deleted.count) deletions")
            #expect(ids != (0..<index.count).map { index.item(atPosition: $0).id }, "positions are not in added order already")
        }
    }
}

/// The primary-key map keys by digest and confirms the holder by its own key; with every digest colliding,
/// it must still answer exactly.
@Suite("Primary-key map: exact under digest collisions")
struct PrimaryKeyMapTests {
    private static func item(_ value: UInt8, account: String) throws -> StoredItem {
        let attributes = try GenericPassword(service: "s", account: account, password: "").attributes
        let secret = SealedSecret(box: [], sequence: 1, kind: .put, entryCount: 0, entryIndex: 0, previousChain: [])
        return StoredItem(id: try ItemID(bytes: [UInt8](repeating: value, count: 16)), attributes: attributes, secret: secret, order: UInt64(value))
    }

    @Test("Every key in one bucket: each holder found by its own key, none for a key nobody holds, removal exact")
    func allCollide() throws {
        var map = PrimaryKeyMap(digest: { _ in 42 })
        let items = try (1...5).map { try Self.item(UInt8($0), account: "a\($0)") }
        for (position, item) in items.enumerated() { map.insert(item.attributes.primaryKey, holder: position) }
        for (position, item) in items.enumerated() {
            #expect(map.holder(of: item.attributes.primaryKey, among: { items[$0] }) == position)
        }
        let stranger = try Self.item(9, account: "nobody")
        #expect(map.holder(of: stranger.attributes.primaryKey, among: { items[$0] }) == nil)
        map.remove(items[2].attributes.primaryKey, holder: 2)
        #expect(map.holder(of: items[2].attributes.primaryKey, among: { items[$0] }) == nil)
        #expect(map.holder(of: items[3].attributes.primaryKey, among: { items[$0] }) == 3)
        // A position now holding another item is never the holder, even while still recorded.
        #expect(map.holder(of: items[4].attributes.primaryKey, among: { $0 == 4 ? stranger : items[$0] }) == nil)
        // A holder that moves is found at its new position only.
        map.move(items[3].attributes.primaryKey, from: 3, to: 2)
        #expect(map.holder(of: items[3].attributes.primaryKey, among: { $0 == 2 ? items[3] : items[$0] }) == 2)
    }
}
