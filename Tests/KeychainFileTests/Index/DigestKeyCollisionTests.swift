import Testing
@testable import KeychainFile

/// The index's tables keep each digest under a 32-bit key folded from it (``DigestTable/key(_:)``), so two items
/// whose id, lookup or primary-key digests differ can share a slot. Every lookup must then tell them apart by
/// the item itself. These tests find such pairs (a birthday search over about 80,000 candidates: the digests
/// are seeded per process, so the pairs are found anew each run) and check that the index never confuses them.
@Suite("Item index: items whose digests share a table key")
struct DigestKeyCollisionTests {
    /// The first two of `candidates` whose `key`s are equal.
    private static func collidingPair<T>(_ candidates: (Int) -> T, key: (T) -> UInt32) throws -> (T, T) {
        var seen: [UInt32: T] = [:]
        for number in 0..<2_000_000 {
            let candidate = candidates(number)
            let candidateKey = key(candidate)
            if let earlier = seen[candidateKey] { return (earlier, candidate) }
            seen[candidateKey] = candidate
        }
        throw CollisionNotFound()
    }

    private struct CollisionNotFound: Error {}

    private static func id(_ number: Int) -> ItemID {
        try! ItemID(bytes: (0..<16).map { UInt8(truncatingIfNeeded: number >> (8 * ($0 % 8))) ^ UInt8(truncatingIfNeeded: $0 &* 31) })
    }

    private static func attributes(service: String = "s", account: String) -> ItemAttributes {
        try! GenericPassword(service: service, account: account, password: "").attributes
    }

    private static func put(_ id: ItemID, _ attributes: ItemAttributes) -> DecodedEntry {
        .put(id: id, attributes: attributes, secret: SealedSecret(
            box: [], sequence: 1, kind: .transaction, entryCount: 0, entryIndex: 0, previousChain: [], entryByteCount: 100))
    }

    private static func accounts(_ items: [StoredItem]) -> [String] {
        items.map { $0.attributes.string(.account) ?? "?" }.sorted()
    }

    @Test("Two ids whose digests share a key: each is found as itself, updated and deleted alone")
    func collidingIDs() throws {
        let (first, second) = try Self.collidingPair(Self.id) { DigestTable.key(ItemIndex.digest($0)) }
        #expect(first != second)
        var index = ItemIndex()
        try index.apply([Self.put(first, Self.attributes(account: "first")), Self.put(second, Self.attributes(account: "second"))])
        #expect(index[first]?.attributes.string(.account) == "first")
        #expect(index[second]?.attributes.string(.account) == "second")
        // An update of one (a put of a live id) replaces that one only.
        try index.apply([Self.put(second, Self.attributes(account: "second, updated"))])
        #expect(index.count == 2)
        #expect(index[first]?.attributes.string(.account) == "first")
        #expect(index[second]?.attributes.string(.account) == "second, updated")
        // Deleting one leaves the other, whichever of the two sits where the other's probe starts.
        try index.apply([.delete(id: first)])
        #expect(index[first] == nil)
        #expect(index[second]?.attributes.string(.account) == "second, updated")
        #expect(throws: IndexConflict.unknownItem(first)) { try index.apply([.delete(id: first)]) }
        try index.apply([.delete(id: second)])
        #expect(index.count == 0 && index[second] == nil)
    }

    @Test("Two service-and-account lookups whose digests share a key: a find by either gives only its item")
    func collidingLookups() throws {
        let (first, second) = try Self.collidingPair({ Self.attributes(account: "account \($0)") }) { attributes in
            let digests = LookupIndex.digests(of: attributes)
            return DigestTable.key(digests[digests.count - 1])  // the service-and-account definition's
        }
        let firstAccount = try #require(first.string(.account)), secondAccount = try #require(second.string(.account))
        var index = ItemIndex()
        try index.apply([Self.put(Self.id(1), first), Self.put(Self.id(2), second)])
        #expect(Self.accounts(try index.matching(.genericPassword(service: "s", account: firstAccount))) == [firstAccount])
        #expect(Self.accounts(try index.matching(.genericPassword(service: "s", account: secondAccount))) == [secondAccount])
        #expect(index.firstGenericPassword(service: "s", account: firstAccount).map { index.item(atPosition: $0).id } == Self.id(1))
        #expect(index.firstGenericPassword(service: "s", account: secondAccount).map { index.item(atPosition: $0).id } == Self.id(2))
        try index.apply([.delete(id: Self.id(1))])
        #expect(try index.matching(.genericPassword(service: "s", account: firstAccount)).isEmpty)
        #expect(Self.accounts(try index.matching(.genericPassword(service: "s", account: secondAccount))) == [secondAccount])
    }

    @Test("Two primary keys whose digests share a key are not duplicates; a true duplicate still is")
    func collidingPrimaryKeys() throws {
        let (first, second) = try Self.collidingPair({ Self.attributes(account: "key \($0)") }) {
            DigestTable.key($0.primaryKeyHashValue)
        }
        var index = ItemIndex()
        try index.apply([Self.put(Self.id(1), first), Self.put(Self.id(2), second)])
        #expect(index.count == 2)
        #expect(index.itemID(for: first.withDefaults().primaryKey) == Self.id(1))
        #expect(index.itemID(for: second.withDefaults().primaryKey) == Self.id(2))
        #expect(throws: IndexConflict.duplicatePrimaryKey(Self.id(3))) {
            try index.apply([Self.put(Self.id(3), second)])
        }
        #expect(index.count == 2)
    }
}
