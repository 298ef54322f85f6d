import Foundation
import Testing
@testable import KeychainFile

/// ItemAttributes keeps its attributes in their file encoding and reads values from it on demand; these
/// tests check the reads and rebuilds against attributes built afresh from a dictionary.
@Suite("Encoded attributes: reads and rebuilds")
struct EncodedAttributesTests {
    private static let values: [Attribute: AttributeValue] = [
        .accessGroup: .string("group"), .accessible: .integer(3), .synchronizable: .boolean(false),
        .label: .string("Läbel ✓"), .creationDate: .date(milliseconds: 1_000), .account: .string("ann"),
        .service: .string("mail"), .generic: .bytes([0, 1, 2]), .creator: .integer(0x6b63_6662),
        .isNegative: .boolean(true),
    ]

    @Test("A forward reader gives every value stored gives, in order, out of order, and for absent attributes")
    func forwardReader() throws {
        let attributes = try ItemAttributes(itemClass: .genericPassword, values: Self.values)
        let catalogue = Attribute.all.filter { $0.isAllowed(in: .genericPassword) }.sorted { $0.tag < $1.tag }
        var reader = ItemAttributes.ForwardReader(attributes)
        for attribute in catalogue {
            #expect(reader.stored(attribute) == attributes.stored(attribute.tag), "\(attribute.name)")
        }
        var backwards = ItemAttributes.ForwardReader(attributes)
        for attribute in catalogue.reversed() {
            #expect(backwards.stored(attribute) == attributes.stored(attribute.tag), "\(attribute.name)")
        }
        var twice = ItemAttributes.ForwardReader(attributes)
        #expect(twice.string(.label) == "Läbel ✓")
        #expect(twice.string(.label) == "Läbel ✓")
        #expect(twice.string(.account) == "ann")
        #expect(twice.string(.account) == "ann")
        #expect(attributes.stored(Attribute.comment.tag) == nil)
        #expect(attributes[.label] == .string("Läbel ✓"))
        #expect(attributes[.generic] == .bytes([0, 1, 2]))
        #expect(attributes[.creator] == .integer(0x6b63_6662))
        #expect(attributes[.isNegative] == .boolean(true))
    }

    @Test("Setting, replacing and removing give the bytes of attributes built from the changed dictionary")
    func rebuilds() throws {
        let attributes = try ItemAttributes(itemClass: .genericPassword, values: Self.values)
        var expected = Self.values
        var changed = attributes
        for (attribute, value) in [(Attribute.comment, AttributeValue.string("new")), (.label, .string("other")),
                                   (.accessGroup, nil), (.isNegative, nil), (.modificationDate, .date(milliseconds: 7))] {
            changed = try changed.setting(attribute, to: value)
            expected[attribute] = value
            let fresh = try ItemAttributes(itemClass: .genericPassword, values: expected)
            #expect(changed == fresh, "after setting \(attribute.name)")
            #expect(changed.encoded == fresh.encoded)
            #expect(changed.count == expected.count)
        }
        #expect(try changed.setting(.comment, to: nil).setting(.comment, to: nil).count == expected.count - 1)
        let undated = try attributes.setting(.creationDate, to: nil)
        let dated = undated.reservingWithDates(created: 2_000, modified: 3_000, secret: [1, 2, 3])
        expected = Self.values
        expected[.creationDate] = .date(milliseconds: 2_000)
        expected[.modificationDate] = .date(milliseconds: 3_000)
        #expect(dated == (try ItemAttributes(itemClass: .genericPassword, values: expected)))
    }

    @Test("Comparing encoded bytes: equal values match, other values and other types do not, absent is nil")
    func byteComparison() throws {
        let attributes = try ItemAttributes(itemClass: .genericPassword, values: Self.values)
        #expect(attributes.value(Attribute.account.tag, equals: .string("ann")) == true)
        #expect(attributes.value(Attribute.account.tag, equals: .string("an")) == false)
        #expect(attributes.value(Attribute.account.tag, equals: .bytes(Array("ann".utf8))) == false)
        #expect(attributes.value(Attribute.accessible.tag, equals: .integer(3)) == true)
        #expect(attributes.value(Attribute.accessible.tag, equals: .integer(4)) == false)
        #expect(attributes.value(Attribute.comment.tag, equals: .string("")) == nil)
        // An attribute is hashed as its encoding, whether stored or given as a value.
        var hashed = Hasher()
        attributes.combineAttribute(Attribute.label.tag, orElse: [], into: &hashed)
        var expected = Hasher()
        StoredAttributeValue.string("Läbel ✓").combineEncoded(tag: Attribute.label.tag, into: &expected)
        #expect(hashed.finalize() == expected.finalize())
        var encoding = Hasher()
        var bytes: [UInt8] = []
        AttributeCoding.appendAttribute(tag: Attribute.label.tag, value: .string("Läbel ✓"), to: &bytes)
        bytes.withUnsafeBytes { encoding.combine(bytes: $0) }
        #expect(hashed.finalize() == encoding.finalize())
        // An absent attribute is hashed as the fallback encoding given.
        let fallback = [UInt8](repeating: 7, count: 9)
        var absent = Hasher()
        attributes.combineAttribute(Attribute.comment.tag, orElse: fallback, into: &absent)
        var fallbackHash = Hasher()
        fallback.withUnsafeBytes { fallbackHash.combine(bytes: $0) }
        #expect(absent.finalize() == fallbackHash.finalize())
        // Another value or another attribute with the same value hashes differently.
        var other = Hasher()
        StoredAttributeValue.string("Läbel").combineEncoded(tag: Attribute.label.tag, into: &other)
        var otherTag = Hasher()
        StoredAttributeValue.string("Läbel ✓").combineEncoded(tag: Attribute.comment.tag, into: &otherTag)
        let labelHash = hashed.finalize()
        #expect(other.finalize() != labelHash && otherTag.finalize() != labelHash)
    }
}
