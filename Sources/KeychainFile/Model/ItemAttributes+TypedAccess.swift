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

/// Collects the fields of a typed item as attribute values of its class, leaving out those that are `nil`,
/// and encodes them once.
///
/// Each value is checked as it is set (the first failure is kept and thrown by ``build()``) and kept in tag
/// order, so that building is one pass that writes the encoded attributes straight into the object that
/// keeps them: a bulk load makes one of these per item.
struct AttributeBuilder {
    let itemClass: ItemClass
    /// Distinct tags in increasing order; a later `set` of a tag replaces its value.
    private var values: [(tag: UInt16, value: StoredAttributeValue)] = []
    /// The first value that broke a limit, thrown by ``build()``.
    private var failure: KeychainError?

    init(_ itemClass: ItemClass) {
        self.itemClass = itemClass
        values.reserveCapacity(16)
    }

    private mutating func put(_ attribute: Attribute, _ value: AttributeValue) {
        guard failure == nil else { return }
        do {
            insert(attribute.tag, try ItemAttributes.validated(value, for: attribute, in: itemClass))
        } catch {
            failure = error
        }
    }

    /// Puts `value` under `tag`, in tag order: typed items set their fields in nearly that order, so the
    /// search from the end is short.
    private mutating func insert(_ tag: UInt16, _ value: StoredAttributeValue) {
        var index = values.endIndex
        while index > values.startIndex, values[index - 1].tag >= tag { index -= 1 }
        if index < values.endIndex, values[index].tag == tag {
            values[index].value = value
        } else {
            values.insert((tag, value), at: index)
        }
    }

    private func contains(_ tag: UInt16) -> Bool {
        values.contains { $0.tag == tag }
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

    /// The attributes set, with the defaults of the attributes a writer stores explicitly
    /// (``ItemAttributes/withDefaults()``) added.
    ///
    /// - Throws: The first `KeychainError.invalidParameter` a `set` met: an attribute not allowed in the
    ///   class, or a value that breaks a limit.
    func build() throws(KeychainError) -> ItemAttributes {
        if let failure { throw failure }
        var complete = self
        for attribute in ItemAttributes.explicitAttributes(of: itemClass) where !contains(attribute.tag) {
            complete.insert(attribute.tag, ItemAttributes.defaultValue(of: attribute))
        }
        return ItemAttributes(itemClass: itemClass, sortedValues: complete.values)
    }
}
