import Foundation
import Testing
@testable import KeychainFile

@Suite("Item attributes: validation, defaults, primary keys")
struct ItemAttributesTests {
    // MARK: Validation

    @Test("An attribute of another class is refused, naming the attribute and the class")
    func notAllowedInClass() {
        expectInvalidParameter("server", "generic password") {
            _ = try ItemAttributes(itemClass: .genericPassword, values: [.server: .string("example.com")])
        }
        expectInvalidParameter("service", "internet password") {
            _ = try ItemAttributes(itemClass: .internetPassword, values: [.service: .string("mail")])
        }
        expectInvalidParameter("keyClass", "certificate") {
            _ = try ItemAttributes(itemClass: .certificate, values: [.keyClass: .integer(1)])
        }
        expectInvalidParameter("subject", "key") {
            _ = try ItemAttributes(itemClass: .key, values: [.subject: .bytes([0x30, 0x00])])
        }
    }

    @Test("Every attribute is refused in exactly the classes SPEC.md §8.2 leaves out")
    func classTable() throws {
        for attribute in Attribute.all {
            for itemClass in ItemClass.allCases {
                let value = sampleValue(for: attribute)
                if attribute.isAllowed(in: itemClass) {
                    #expect(throws: Never.self) { try ItemAttributes(itemClass: itemClass, values: [attribute: value]) }
                } else {
                    expectInvalidParameter(attribute.name, "not allowed") {
                        _ = try ItemAttributes(itemClass: itemClass, values: [attribute: value])
                    }
                }
            }
        }
    }

    @Test("Every attribute's tag, name, type and classes are those of SPEC.md §8.2's table")
    func catalogueMatchesSpecification() throws {
        // The expectation is read from the specification itself, not from the catalogue under test: a wrong
        // class bit in the catalogue (where `classTable` above only follows `isAllowed`) fails here.
        let spec = RepositoryFiles.url("SPEC.md")
        let text = try String(contentsOf: spec, encoding: .utf8)
        let section = try #require(text.range(of: "### 8.2 Attributes"))
        let end = try #require(text.range(of: "### 8.3", range: section.upperBound..<text.endIndex))
        let classLetters: [Character: ItemClass] = ["G": .genericPassword, "I": .internetPassword, "C": .certificate, "K": .key]
        var rows: [UInt16: (name: String, type: String, classes: Set<ItemClass>)] = [:]
        for line in text[section.upperBound..<end.lowerBound].split(separator: "\n") where line.hasPrefix("| 0x") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let tag = try #require(UInt16(cells[0].dropFirst(2), radix: 16))
            let classes = try Set(cells[3].map { try #require(classLetters[$0]) })
            rows[tag] = (cells[1], cells[2], classes)
        }
        #expect(rows.count == Attribute.all.count)
        for attribute in Attribute.all {
            let row = try #require(rows[attribute.tag], "0x\(String(attribute.tag, radix: 16)) is not in SPEC.md §8.2")
            #expect(attribute.name == row.name)
            #expect("\(attribute.type)" == row.type, "\(attribute.name)")
            #expect(attribute.classes == row.classes, "\(attribute.name)")
            for itemClass in ItemClass.allCases {
                #expect(attribute.isAllowed(in: itemClass) == row.classes.contains(itemClass), "\(attribute.name) in \(itemClass)")
            }
        }
    }

    @Test("A value of the wrong type is refused, naming the attribute and both types")
    func wrongType() {
        expectInvalidParameter("service", "expected type string, got bytes") {
            _ = try ItemAttributes(itemClass: .genericPassword, values: [.service: .bytes([1])])
        }
        expectInvalidParameter("port", "expected type integer, got string") {
            _ = try ItemAttributes(itemClass: .internetPassword, values: [.port: .string("443")])
        }
        expectInvalidParameter("creationDate", "expected type date") {
            _ = try ItemAttributes(itemClass: .key, values: [.creationDate: .integer(0)])
        }
        expectInvalidParameter("canSign", "expected type boolean") {
            _ = try ItemAttributes(itemClass: .key, values: [.canSign: .integer(1)])
        }
    }

    @Test("Strings are limited to 65,535 bytes of UTF-8, not characters; bytes to 65,535 bytes")
    func lengthLimits() throws {
        let limit = String(repeating: "a", count: 65_535)
        _ = try ItemAttributes(itemClass: .genericPassword, values: [.label: .string(limit)])
        expectInvalidParameter("label", "65536 bytes of UTF-8") {
            _ = try ItemAttributes(itemClass: .genericPassword, values: [.label: .string(limit + "a")])
        }
        // 32,768 two-byte characters: far fewer characters than the limit, one byte too many.
        expectInvalidParameter("comment", "65536") {
            _ = try ItemAttributes(itemClass: .genericPassword, values: [.comment: .string(String(repeating: "é", count: 32_768))])
        }
        _ = try ItemAttributes(itemClass: .genericPassword, values: [.generic: .bytes([UInt8](repeating: 1, count: 65_535))])
        expectInvalidParameter("generic", "65536 bytes") {
            _ = try ItemAttributes(itemClass: .genericPassword, values: [.generic: .bytes([UInt8](repeating: 1, count: 65_536))])
        }
    }

    @Test("Integers outside the ranges of SPEC.md §8.2 are refused; the ends of each range are accepted")
    func integerRanges() throws {
        let cases: [(Attribute, ItemClass, ClosedRange<Int64>)] = [
            (.accessible, .genericPassword, 1...7),
            (.creator, .genericPassword, 0...0xffff_ffff),
            (.itemType, .internetPassword, 0...0xffff_ffff),
            (.protocolType, .internetPassword, 0...0xffff_ffff),
            (.authenticationType, .internetPassword, 0...0xffff_ffff),
            (.port, .internetPassword, 0...65_535),
            (.certificateType, .certificate, 0...3),
            (.certificateEncoding, .certificate, 0...0xffff_ffff),
            (.keyClass, .key, 0...2),
            (.keyType, .key, 0...0xffff_ffff),
            (.keySizeInBits, .key, 0...0x7fff_ffff),
            (.effectiveKeySize, .key, 0...0x7fff_ffff),
        ]
        for (attribute, itemClass, range) in cases {
            for inside in [range.lowerBound, range.upperBound] {
                let attributes = try ItemAttributes(itemClass: itemClass, values: [attribute: .integer(inside)])
                #expect(attributes[attribute] == .integer(inside))
            }
            for outside in [range.lowerBound - 1, range.upperBound + 1] {
                expectInvalidParameter(attribute.name, "\(outside) is outside") {
                    _ = try ItemAttributes(itemClass: itemClass, values: [attribute: .integer(outside)])
                }
            }
        }
        // Dates far before and after 1970 are accepted.
        for value: Int64 in [-(1 << 52), -1, 1 << 52] {
            _ = try ItemAttributes(itemClass: .key, values: [.creationDate: .date(milliseconds: value)])
        }
    }

    @Test("Dates keep whole milliseconds; dates beyond 64-bit milliseconds are refused")
    func dates() throws {
        let precise = Date(timeIntervalSince1970: 1_767_225_600.123_456)
        let attributes = try ItemAttributes(itemClass: .key, values: [.creationDate: .date(precise)])
        #expect(attributes[.creationDate]?.millisecondsSince1970 == 1_767_225_600_123)
        guard case .date(let stored)? = attributes[.creationDate] else {
            Issue.record("creationDate is not a date")
            return
        }
        #expect(stored == Date(timeIntervalSince1970: 1_767_225_600.123))
        // AttributeValue equality is at millisecond precision, like storage.
        #expect(AttributeValue.date(precise) == .date(milliseconds: 1_767_225_600_123))
        #expect(AttributeValue.date(precise) != .date(milliseconds: 1_767_225_600_124))
        #expect(Set([AttributeValue.date(precise), .date(milliseconds: 1_767_225_600_123)]).count == 1)
        // Before 1970.
        #expect(AttributeValue.date(Date(timeIntervalSince1970: -1.5)).millisecondsSince1970 == -1_500)

        expectInvalidParameter("modificationDate", "64-bit milliseconds") {
            _ = try ItemAttributes(itemClass: .key, values: [.modificationDate: .date(Date(timeIntervalSince1970: 1e300))])
        }
        #expect(AttributeValue.date(Date(timeIntervalSince1970: 1e300)).millisecondsSince1970 == nil)
        #expect(AttributeValue.string("x").millisecondsSince1970 == nil)
    }

    @Test("String values compare by their UTF-8 bytes, not by canonical equivalence")
    func exactStrings() throws {
        let composed = "caf\u{e9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed)  // Swift's String equality…
        #expect(AttributeValue.string(composed) != .string(decomposed))  // …is not the keychain's.
        #expect(Set([AttributeValue.string(composed), .string(decomposed)]).count == 2)
        let a = try ItemAttributes(itemClass: .genericPassword, values: [.service: .string(composed)])
        let b = try ItemAttributes(itemClass: .genericPassword, values: [.service: .string(decomposed)])
        #expect(a != b)
        #expect(a.primaryKey != b.primaryKey)
    }

    // MARK: Access and changes

    @Test("Iteration is in increasing tag order, and the subscript reads what was given")
    func iterationAndSubscript() throws {
        let values = everyAttribute(of: .internetPassword)
        let attributes = try ItemAttributes(itemClass: .internetPassword, values: values)
        let tags = attributes.map(\.attribute.tag)
        #expect(tags == tags.sorted())
        #expect(tags.count == values.count)
        for (attribute, value) in values {
            #expect(attributes[attribute] == value)
        }
        #expect(attributes[.service] == nil)
        #expect(attributes.values == values)
    }

    @Test("setting adds, replaces and removes, and validates what it adds")
    func setting() throws {
        let base = try ItemAttributes(itemClass: .genericPassword, values: [.service: .string("mail")])
        let added = try base.setting(.account, to: .string("ann"))
        #expect(added[.account] == .string("ann"))
        #expect(added.count == 2)
        let replaced = try added.setting(.account, to: .string("bob"))
        #expect(replaced[.account] == .string("bob"))
        #expect(replaced.count == 2)
        let removed = try replaced.setting(.account, to: nil)
        #expect(removed == base)
        #expect(try base.setting(.label, to: nil) == base)
        // Adding in front of, between and after existing tags keeps the order.
        let ordered = try base.setting(.accessGroup, to: .string("g")).setting(.comment, to: .string("c"))
            .setting(.isNegative, to: .boolean(true))
        #expect(ordered.map(\.attribute) == [.accessGroup, .service, .comment, .isNegative])

        expectInvalidParameter("server", "not allowed") { _ = try base.setting(.server, to: .string("x")) }
        expectInvalidParameter("accessible", "outside") { _ = try base.setting(.accessible, to: .integer(9)) }
        expectInvalidParameter("label", "expected type string") { _ = try base.setting(.label, to: .boolean(true)) }
        #expect(base[.service] == .string("mail"))
    }

    // MARK: Defaults

    @Test("withDefaults adds exactly the primary key, accessGroup, accessible and synchronizable",
          arguments: ItemClass.allCases)
    func defaults(itemClass: ItemClass) throws {
        let empty = try ItemAttributes(itemClass: itemClass)
        let filled = empty.withDefaults()
        let expectedAttributes = Set(Attribute.primaryKey(of: itemClass) + [.accessGroup, .accessible, .synchronizable])
        #expect(Set(filled.map(\.attribute)) == expectedAttributes)
        #expect(filled[.accessGroup] == .string(""))
        #expect(filled[.accessible] == .integer(1))
        #expect(filled[.synchronizable] == .boolean(false))
        for attribute in Attribute.primaryKey(of: itemClass) {
            let expected: AttributeValue
            switch (attribute, attribute.type) {
            case (_, .string): expected = .string("")
            case (_, .bytes): expected = .bytes([])
            default: expected = .integer(0)
            }
            #expect(filled[attribute] == expected, "\(attribute)")
        }
        // The defaults are valid attributes: they survive a full validation.
        #expect(try ItemAttributes(itemClass: itemClass, values: filled.values) == filled)
        #expect(filled.withDefaults() == filled)
    }

    @Test("withDefaults keeps values that are present")
    func defaultsKeepValues() throws {
        let given = try ItemAttributes(itemClass: .internetPassword, values: [
            .accessGroup: .string("team"), .accessible: .integer(5), .synchronizable: .boolean(true),
            .port: .integer(443), .label: .string("L"),
        ])
        let filled = given.withDefaults()
        #expect(filled[.accessGroup] == .string("team"))
        #expect(filled[.accessible] == .integer(5))
        #expect(filled[.synchronizable] == .boolean(true))
        #expect(filled[.port] == .integer(443))
        #expect(filled[.label] == .string("L"))
        #expect(filled[.server] == .string(""))
        #expect(filled.map(\.attribute.tag) == filled.map(\.attribute.tag).sorted())
    }

    // MARK: Primary keys

    @Test("Primary keys ignore attributes outside the key and treat absent as the default")
    func primaryKeysEqual() throws {
        let bare = try ItemAttributes(itemClass: .genericPassword, values: [.service: .string("mail")])
        let decorated = try ItemAttributes(itemClass: .genericPassword, values: [
            .service: .string("mail"), .label: .string("Mail"), .comment: .string("c"), .accessible: .integer(7),
            .creationDate: .date(milliseconds: 5), .generic: .bytes([1, 2]),
        ])
        let explicitDefaults = try ItemAttributes(itemClass: .genericPassword, values: [
            .service: .string("mail"), .account: .string(""), .accessGroup: .string(""), .synchronizable: .boolean(false),
        ])
        #expect(bare.primaryKey == decorated.primaryKey)
        #expect(bare.primaryKey == explicitDefaults.primaryKey)
        #expect(bare.primaryKey == bare.withDefaults().primaryKey)
        #expect(Set([bare.primaryKey, decorated.primaryKey, explicitDefaults.primaryKey]).count == 1)
    }

    @Test("Primary keys differ in accessGroup, synchronizable and class")
    func primaryKeysDiffer() throws {
        let base = try ItemAttributes(itemClass: .genericPassword, values: [.service: .string("mail"), .account: .string("ann")])
        let otherGroup = try base.setting(.accessGroup, to: .string("team"))
        let synchronised = try base.setting(.synchronizable, to: .boolean(true))
        let notSynchronised = try base.setting(.synchronizable, to: .boolean(false))
        #expect(base.primaryKey != otherGroup.primaryKey)
        #expect(base.primaryKey != synchronised.primaryKey)
        #expect(base.primaryKey == notSynchronised.primaryKey)
        #expect(otherGroup.primaryKey != synchronised.primaryKey)
        // An internet password with the same account is a different key: the class is part of it.
        let internet = try ItemAttributes(itemClass: .internetPassword, values: [.account: .string("ann")])
        let generic = try ItemAttributes(itemClass: .genericPassword, values: [.account: .string("ann")])
        #expect(internet.primaryKey != generic.primaryKey)
        #expect(generic.primaryKey.itemClass == .genericPassword)
    }

    @Test("Changing any one primary-key attribute changes the key; changing another attribute does not",
          arguments: ItemClass.allCases)
    func everyKeyAttributeCounts(itemClass: ItemClass) throws {
        let base = try ItemAttributes(itemClass: itemClass, values: everyAttribute(of: itemClass, variant: 0))
        let keyTags = Set((Attribute.primaryKey(of: itemClass) + [.accessGroup, .synchronizable]).map(\.tag))
        for attribute in Attribute.all where attribute.isAllowed(in: itemClass) {
            let changed = try base.setting(attribute, to: sampleValue(for: attribute, variant: 1))
            #expect(changed != base, "\(attribute)")
            if keyTags.contains(attribute.tag) {
                #expect(changed.primaryKey != base.primaryKey, "\(attribute)")
            } else {
                #expect(changed.primaryKey == base.primaryKey, "\(attribute)")
            }
        }
    }

    @Test("Primary keys are the same whatever order the attributes were given in")
    func primaryKeyIsCanonical() throws {
        let values = everyAttribute(of: .key)
        var generator = TestRandom(seed: 7)
        var attributes = try ItemAttributes(itemClass: .key)
        for (attribute, value) in values.shuffled(using: &generator) {
            attributes = try attributes.setting(attribute, to: value)
        }
        let direct = try ItemAttributes(itemClass: .key, values: values)
        #expect(attributes == direct)
        #expect(attributes.primaryKey == direct.primaryKey)
        #expect(attributes.primaryKey.hashValue == direct.primaryKey.hashValue)
    }

    @Test("The primary key's encoding is the class code and each key attribute as stored or as its default, and its hash is the key's hash value",
          arguments: ItemClass.allCases)
    func primaryKeyEncodingAndHash(itemClass: ItemClass) throws {
        let keyAttributes = ItemAttributes.keyAttributes(of: itemClass)
        let every = try ItemAttributes(itemClass: itemClass, values: everyAttribute(of: itemClass, variant: 2))
        var cases = [try ItemAttributes(itemClass: itemClass), every, every.withDefaults()]
        // Each key attribute missing in turn, and every other one missing: defaults between stored values.
        for attribute in keyAttributes { cases.append(try every.setting(attribute, to: nil)) }
        var alternate = every
        for (index, attribute) in keyAttributes.enumerated() where index % 2 == 0 { alternate = try alternate.setting(attribute, to: nil) }
        cases.append(alternate)
        for attributes in cases {
            // The key as the format defines it, built by looking each key attribute up on its own.
            var expected: [UInt8] = [itemClass.rawValue]
            for attribute in keyAttributes {
                if let entry = attributes.entry(attribute.tag) {
                    attributes.encoded.withUnsafeBytes { expected.append(contentsOf: $0[entry.start..<entry.value.upperBound]) }
                } else {
                    AttributeCoding.appendAttribute(tag: attribute.tag, value: ItemAttributes.defaultValue(of: attribute), to: &expected)
                }
            }
            #expect(attributes.primaryKey.encoded == expected)
            #expect(attributes.primaryKeyHashValue == attributes.primaryKey.hashValue)
            var hasher = Hasher()
            expected.withUnsafeBytes { hasher.combine(bytes: $0) }
            #expect(attributes.primaryKeyHashValue == hasher.finalize())
        }
    }

    // MARK: The attribute table

    @Test("The attribute table has every row of SPEC.md §8.2, with the names and tags given there")
    func attributeTable() {
        #expect(Attribute.all.count == 42)
        #expect(Attribute.all.map(\.tag) == Attribute.all.map(\.tag).sorted())
        #expect(Set(Attribute.all.map(\.tag)).count == 42)
        #expect(Attribute.itemDescription.name == "description" && Attribute.itemDescription.tag == 0x0104)
        #expect(Attribute.itemType.name == "type" && Attribute.itemType.tag == 0x0107)
        #expect(Attribute.protocolType.name == "protocol" && Attribute.protocolType.tag == 0x0203)
        #expect(Attribute.canUnwrap.tag == 0x040e && Attribute.canUnwrap.type == .boolean)
        #expect(Attribute.publicKeyHash.tag == 0x0307 && Attribute.publicKeyHash.classes == [.certificate])
        #expect(Attribute.account.classes == [.genericPassword, .internetPassword])
        #expect(Attribute.label.classes == Set(ItemClass.allCases))
        for attribute in Attribute.all {
            #expect(Attribute.withTag(attribute.tag) == attribute)
            #expect(Attribute.withTag(attribute.tag)?.name == attribute.name)
        }
        #expect(Attribute.withTag(0x0007) == nil)
        #expect(Attribute.withTag(0x0000) == nil)
        // The flat shape table answers every tag as a search of the catalogue does, including tags whose
        // group or member byte is past the table.
        var wrong: [UInt16] = []
        for tag in UInt16.min...UInt16.max {
            let expected = Attribute.all.first { $0.tag == tag }
            let shape = AttributeShape.withTag(tag)
            if Attribute.withTag(tag)?.name != expected?.name || shape?.tag != expected?.tag
                || shape?.type != expected?.type || shape?.classMask != expected?.classMask
                || shape?.integerRange != expected?.integerRange {
                wrong.append(tag)
            }
        }
        #expect(wrong.isEmpty)
        #expect(Attribute.primaryKey(of: .genericPassword) == [.account, .service])
        #expect(Attribute.primaryKey(of: .internetPassword).map(\.name)
            == ["account", "server", "securityDomain", "protocol", "authenticationType", "port", "path"])
        #expect(Attribute.primaryKey(of: .certificate) == [.certificateType, .issuer, .serialNumber])
        #expect(Attribute.primaryKey(of: .key)
            == [.keyClass, .applicationLabel, .applicationTag, .keyType, .keySizeInBits, .effectiveKeySize])
    }
}

@Suite("Stamping the dates of a new item")
struct SettingDatesTests {
    @Test("reservingWithDates gives what two setting calls give, in every class, with the secret reserved after")
    func sameAsSettingTwice() throws {
        let created: Int64 = 1_700_000_000_123
        let modified: Int64 = 1_800_000_000_456
        let samples: [ItemAttributes] = [
            try GenericPassword(service: "s", account: "a", password: "p").attributes,
            try InternetPassword(server: "example.com", account: "a", password: "p").attributes,
            try ItemAttributes(itemClass: .key, values: [.label: .string("k"), .applicationLabel: .bytes([1, 2])]),
            try ItemAttributes(itemClass: .genericPassword, values: [.account: .string("only tags above the dates")]),
            try ItemAttributes(itemClass: .genericPassword, values: [.label: .string("only tags below the dates")]),
            try ItemAttributes(itemClass: .certificate, values: [:]),
        ]
        for attributes in samples {
            let expected = try attributes
                .setting(.creationDate, to: .date(milliseconds: created))
                .setting(.modificationDate, to: .date(milliseconds: modified))
            for secret in [[], [UInt8](repeating: 0xA5, count: 33)] {
                let stamped = attributes.reservingWithDates(created: created, modified: modified, secret: secret)
                #expect(stamped == expected)
                #expect(stamped.count == expected.count)
                #expect(stamped.map(\.attribute.tag) == expected.map(\.attribute.tag))
                #expect(stamped.encoded.storage.reservedSecret() == secret)
            }
        }
    }
}

@Suite("Building a typed item's attributes")
struct AttributeBuilderTests {
    @Test("Values set in any order come out in tag order; a later set replaces; defaults fill the explicit attributes")
    func orderAndDefaults() throws {
        var builder = AttributeBuilder(.genericPassword)
        builder.set(.comment, "c")
        builder.set(.account, "ann")
        builder.set(.label, "first")
        builder.set(.label, "second")
        builder.set(.creator, UInt32(7))
        builder.set(.accessGroup, nil as String?)
        let built = try builder.build()
        let expected = try ItemAttributes(itemClass: .genericPassword, values: [
            .comment: .string("c"), .account: .string("ann"), .label: .string("second"), .creator: .integer(7),
        ]).withDefaults()
        #expect(built == expected)
        #expect(built.count == 8)  // the four set, and accessGroup, accessible, synchronizable and service by default
        let tags = built.map(\.attribute.tag)
        #expect(tags == tags.sorted() && Set(tags).count == tags.count)
    }

    @Test("The first value that breaks a limit is thrown, naming its attribute")
    func firstFailure() throws {
        var builder = AttributeBuilder(.genericPassword)
        builder.set(.service, "fine")
        builder.set(.label, String(repeating: "x", count: 65_536))
        builder.set(.comment, String(repeating: "y", count: 70_000))
        builder.set(.account, "fine too")
        #expect(Self.message { () throws(KeychainError) in try builder.build() }?.hasPrefix("label: 65536 bytes") == true)
        var wrongClass = AttributeBuilder(.key)
        wrongClass.set(.service, "s")
        #expect(Self.message { () throws(KeychainError) in try wrongClass.build() } == "service: not allowed in key items")
        var outOfRange = AttributeBuilder(.genericPassword)
        outOfRange.set(.accessible, Int64(9))
        #expect(Self.message { () throws(KeychainError) in try outOfRange.build() }?.hasPrefix("accessible: 9 is outside") == true)
    }

    @Test("Typed items of every class give the attributes their dictionary gives")
    func typedItemsMatchTheirDictionaries() throws {
        var key = Key(keyClass: .privateKey, applicationLabel: [1, 2, 3], value: [9])
        key.canSign = true
        key.label = "signing key"
        let samples: [ItemAttributes] = [
            try GenericPassword(service: "mail", account: "ann", password: "p", accessGroup: "g", label: "Mail").attributes,
            try InternetPassword(server: "example.com", account: "ann", password: "p").attributes,
            try key.attributes,
        ]
        for attributes in samples {
            let rebuilt = try ItemAttributes(itemClass: attributes.itemClass, values: attributes.values)
            #expect(rebuilt == attributes)
            #expect(rebuilt.withDefaults() == attributes)
        }
    }

    private static func message(_ body: () throws(KeychainError) -> ItemAttributes) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            guard case .invalidParameter(let message) = error else { return nil }
            return message
        }
    }
}
