import Foundation
import Testing
@testable import KeychainFile

@Suite("Item ids and persistent references")
struct PersistentReferenceTests {
    @Test("A reference is \"KCFR\", 0x01 and the item id: 21 bytes, written out by hand here")
    func layout() throws {
        let reference = PersistentReference(itemID: sequentialID)
        #expect(reference.bytes == (try hex("4b434652 01 000102030405060708090a0b0c0d0e0f")))
        #expect(try PersistentReference(bytes: reference.bytes) == reference)
        #expect(try PersistentReference(bytes: reference.bytes).itemID == sequentialID)
    }

    @Test("Random ids round-trip through references")
    func roundTrip() throws {
        var generator = TestRandom(seed: 21)
        for _ in 0..<100 {
            let id = ItemID(using: &generator)
            #expect(try PersistentReference(bytes: PersistentReference(itemID: id).bytes).itemID == id)
        }
    }

    @Test("Wrong lengths and prefixes are refused")
    func rejects() throws {
        let good = PersistentReference(itemID: sequentialID).bytes
        expectInvalidParameter("persistent reference", "0 bytes") { _ = try PersistentReference(bytes: []) }
        expectInvalidParameter("20 bytes") { _ = try PersistentReference(bytes: good.dropLast()) }
        expectInvalidParameter("22 bytes") { _ = try PersistentReference(bytes: good + [0]) }
        var wrongMagic = good
        wrongMagic[3] = UInt8(ascii: "S")  // "KCFS"
        expectInvalidParameter("KCFR") { _ = try PersistentReference(bytes: wrongMagic) }
        var wrongFormat = good
        wrongFormat[4] = 0x02
        expectInvalidParameter("format 1") { _ = try PersistentReference(bytes: wrongFormat) }
    }

    @Test("Item ids: exactly 16 bytes, bytes and withUnsafeBytes agree, description is lowercase hex")
    func itemIDs() throws {
        #expect(sequentialID.bytes == Array(UInt8(0)...UInt8(15)))
        #expect(sequentialID.withUnsafeBytes { Array($0) } == sequentialID.bytes)
        #expect(sequentialID.description == "000102030405060708090a0b0c0d0e0f")
        let high = try ItemID(bytes: [UInt8](repeating: 0xab, count: 16))
        #expect(high.description == "abababababababababababababababab")
        #expect(high != sequentialID)
        #expect(Set([high, sequentialID, try ItemID(bytes: sequentialID.bytes)]).count == 2)
        expectInvalidParameter("item id", "15 bytes") { _ = try ItemID(bytes: [UInt8](repeating: 0, count: 15)) }
        expectInvalidParameter("item id", "more than 16") { _ = try ItemID(bytes: [UInt8](repeating: 0, count: 17)) }
        expectInvalidParameter("item id", "0 bytes") { _ = try ItemID(bytes: []) }
        // Any sequence works, not only arrays.
        #expect(try ItemID(bytes: (0..<16).lazy.map { UInt8($0) }) == sequentialID)
    }

    @Test("Random ids come from the generator given, 16 bytes of it")
    func randomIDs() {
        var first = TestRandom(seed: 99)
        var second = TestRandom(seed: 99)
        let a = ItemID(using: &first)
        let b = ItemID(using: &second)
        #expect(a == b)
        #expect(ItemID(using: &first) != a)
        var system = SystemRandomNumberGenerator()
        #expect(ItemID(using: &system) != ItemID(using: &system))
    }
}
