#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Reading and building attributes for the typed items.

extension ItemAttributes {
    /// The value of a string attribute, or `nil` when absent.
    func string(_ attribute: Attribute) -> String? {
        if case .string(let text)? = stored(attribute.tag) { return text }
        return nil
    }

    /// The value of a bytes attribute, or `nil` when absent.
    func bytes(_ attribute: Attribute) -> [UInt8]? {
        if case .bytes(let bytes)? = stored(attribute.tag) { return bytes }
        return nil
    }

    /// The value of an integer attribute, or `nil` when absent.
    func integer(_ attribute: Attribute) -> Int64? {
        if case .integer(let number)? = stored(attribute.tag) { return number }
        return nil
    }

    /// The value of a boolean attribute, or `nil` when absent.
    func boolean(_ attribute: Attribute) -> Bool? {
        if case .boolean(let flag)? = stored(attribute.tag) { return flag }
        return nil
    }

    /// The value of a date attribute, or `nil` when absent.
    func date(_ attribute: Attribute) -> Date? {
        if case .date(let milliseconds)? = stored(attribute.tag) {
            return AttributeValue.date(fromMilliseconds: milliseconds)
        }
        return nil
    }

    /// The value of a four-character-code attribute (0 … 2³²−1 once validated), or `nil` when absent.
    func code(_ attribute: Attribute) -> UInt32? {
        integer(attribute).flatMap { UInt32(exactly: $0) }
    }

    /// The accessibility of the item, ``Accessibility/whenUnlocked`` when absent.
    var accessibility: Accessibility {
        integer(.accessible).flatMap(Accessibility.init(rawValue:)) ?? .whenUnlocked
    }
}

/// Collects the fields of a typed item as attribute values, leaving out those that are `nil`.
struct AttributeBuilder {
    /// Each attribute at most once (a later `set` replaces the value), in the order set.
    private(set) var values: [(attribute: Attribute, value: AttributeValue)] = []

    init() { values.reserveCapacity(16) }

    private mutating func put(_ attribute: Attribute, _ value: AttributeValue) {
        if let index = values.firstIndex(where: { $0.attribute == attribute }) {
            values[index].value = value
        } else {
            values.append((attribute, value))
        }
    }

    mutating func set(_ attribute: Attribute, _ value: String?) {
        if let value { put(attribute, .string(value)) }
    }

    mutating func set(_ attribute: Attribute, _ value: [UInt8]?) {
        if let value { put(attribute, .bytes(value)) }
    }

    mutating func set(_ attribute: Attribute, _ value: Int64?) {
        if let value { put(attribute, .integer(value)) }
    }

    mutating func set(_ attribute: Attribute, _ value: UInt32?) {
        if let value { put(attribute, .integer(Int64(value))) }
    }

    mutating func set(_ attribute: Attribute, _ value: Bool?) {
        if let value { put(attribute, .boolean(value)) }
    }

    mutating func set(_ attribute: Attribute, _ value: Date?) {
        if let value { put(attribute, .date(value)) }
    }

    /// Sets the attributes every class has.
    mutating func setCommon(
        accessGroup: String, accessible: Accessibility, synchronizable: Bool, label: String?,
        creationDate: Date?, modificationDate: Date?
    ) {
        set(.accessGroup, accessGroup)
        set(.accessible, accessible.rawValue)
        set(.synchronizable, synchronizable)
        set(.label, label)
        set(.creationDate, creationDate)
        set(.modificationDate, modificationDate)
    }

    /// Sets the attributes generic and internet passwords share.
    mutating func setPasswordCommon(
        itemDescription: String?, comment: String?, creator: UInt32?, itemType: UInt32?,
        isInvisible: Bool?, isNegative: Bool?
    ) {
        set(.itemDescription, itemDescription)
        set(.comment, comment)
        set(.creator, creator)
        set(.itemType, itemType)
        set(.isInvisible, isInvisible)
        set(.isNegative, isNegative)
    }

    /// Validates the values as attributes of `itemClass` and adds the defaults.
    func build(_ itemClass: ItemClass) throws(KeychainError) -> ItemAttributes {
        try ItemAttributes(itemClass: itemClass, distinctValues: values).withDefaults()
    }
}
